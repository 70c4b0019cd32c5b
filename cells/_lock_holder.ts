// Cell 3's dead holder: takes the compression lock of `held` for an hour, says so, and
// waits to be killed. Its lock must then be recoverable at once: no TTL to wait out.
import { childArgs, openStoreFor, waitToBeKilled } from "./child_runtime.ts";
import { LOCK_TTL_MS } from "./_lock_taker.ts";

const [target, dbPath, readyPath] = childArgs(3, "_lock_holder.ts <target> <db> <ready>");
const store = await openStoreFor(target!, dbPath!);
await store.createSession("held");
await store.appendMessage("held", { role: "user", content: "turn" });
if (!await store.tryAcquireCompressionLock!("held", `cell3-holder:pid=${Deno.pid}`, LOCK_TTL_MS)) {
  throw new Error("lock holder: could not take the free compression lock of held");
}
waitToBeKilled(readyPath!);
