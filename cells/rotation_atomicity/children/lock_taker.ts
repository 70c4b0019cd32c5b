// Cell 3's taker: after a rotator or a holder was killed, a fresh process must take the
// dead holder's compression lock at once (one attempt) and complete a rotation with it.
// Prints one JSON line (what it found and did), then waits to be killed without another
// write or a close: its release must be durable once it returned. Its holder names the
// test's pid, alive, so a lost release would leave the lock in force.
import { childArgs, openStoreFor, waitToBeKilled } from "../../contract/child_runtime.ts";
import { printReport } from "../../../internal/report_line.ts";

/** Every lock of cell 3 is taken for an hour: only liveness, never expiry, frees it. */
export const LOCK_TTL_MS = 3_600_000;

if (import.meta.main) {
  const [target, dbPath, parentId, childId, ready, alivePid] = childArgs(
    6,
    "lock_taker.ts <target> <db> <parent> <child> <ready> <a live pid for the holder>",
  );
  const store = await openStoreFor(target!, dbPath!);
  const holder = `cell3-taker:pid=${alivePid}`;
  const started = performance.now();
  const taken = await store.tryAcquireCompressionLock!(parentId!, holder, LOCK_TTL_MS);
  const tookMs = Math.round(performance.now() - started);
  let released: boolean | undefined;
  if (taken) {
    await store.publishCompressionChild!({
      parentId: parentId!,
      childId: childId!,
      holder,
      messages: [{ role: "system", content: `taken over from ${parentId}` }],
    });
    released = await store.releaseCompressionLock!(parentId!, holder);
  }
  printReport({ taken, tookMs, released });
  waitToBeKilled(ready!);
}
