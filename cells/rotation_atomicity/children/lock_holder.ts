// Cell 3's dead holder: takes the compression lock of `held` for an hour, then rotates
// `acked` into `acked-child` under its own lock, journals that acknowledged rotation,
// says so and waits to be killed with no further write and no close. The lock of `held`
// must then be recoverable at once (no TTL to wait out), and the rotation of `acked`
// durable: it was acknowledged.
import { AckWriter } from "../../../harness/ack_journal.ts";
import { childArgs, openStoreFor, waitToBeKilled } from "../../contract/child_runtime.ts";
import { LOCK_TTL_MS } from "./lock_taker.ts";

const [target, dbPath, readyPath, acksPath] = childArgs(
  4,
  "lock_holder.ts <target> <db> <ready> <acks>",
);
const store = await openStoreFor(target!, dbPath!);
const holder = `cell3-holder:pid=${Deno.pid}`;
for (const session of ["held", "acked"]) {
  await store.createSession(session);
  await store.appendMessage(session, { role: "user", content: "turn" });
  if (!await store.tryAcquireCompressionLock!(session, holder, LOCK_TTL_MS)) {
    throw new Error(`lock holder: could not take the free compression lock of ${session}`);
  }
}
await store.publishCompressionChild!({
  parentId: "acked",
  childId: "acked-child",
  holder,
  messages: [{ role: "system", content: "summary of acked" }],
});
new AckWriter(acksPath!).write({ i: 0, parentId: "acked", childId: "acked-child" });
waitToBeKilled(readyPath!);
