// Cell 8's live lock holder: takes the compression lock of a session for an hour and ends
// the session for compression without publishing a continuation (a rotator that would die
// next), says so and waits, alive, until it is killed. While it lives its orphan must not
// be reopened; once it is dead, at once.
import { childArgs, openStoreFor, waitToBeKilled } from "../../contract/child_runtime.ts";
import { LOCK_TTL_MS } from "../../rotation_atomicity/children/lock_taker.ts";

const [target, dbPath, session, ready] = childArgs(
  4,
  "orphan_holder.ts <target> <db> <session> <ready>",
);
const store = await openStoreFor(target!, dbPath!);
const holder = `cell8-holder:pid=${Deno.pid}`;
if (!await store.tryAcquireCompressionLock!(session!, holder, LOCK_TTL_MS)) {
  throw new Error(`orphan holder: could not take the free compression lock of ${session}`);
}
if (!await store.endSession!(session!, "compression")) {
  throw new Error(`orphan holder: endSession of ${session} returned false`);
}
waitToBeKilled(ready!);
