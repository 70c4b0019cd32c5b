// Cell 3's taker: after a rotator or a holder was killed, a fresh process must take the
// dead holder's compression lock at once (one attempt) and complete a rotation with it.
// Prints one JSON line: what it found and did.
import { childArgs, openStoreFor } from "./child_runtime.ts";

/** Every lock of cell 3 is taken for an hour: only liveness, never expiry, frees it. */
export const LOCK_TTL_MS = 3_600_000;

if (import.meta.main) {
  const [target, dbPath, parentId, childId] = childArgs(
    4,
    "_lock_taker.ts <target> <db> <parent> <child>",
  );
  const store = await openStoreFor(target!, dbPath!);
  const holder = `cell3-taker:pid=${Deno.pid}`;
  const started = performance.now();
  const taken = await store.tryAcquireCompressionLock!(parentId!, holder, LOCK_TTL_MS);
  const tookMs = Math.round(performance.now() - started);
  if (taken) {
    await store.publishCompressionChild!({
      parentId: parentId!,
      childId: childId!,
      holder,
      messages: [{ role: "system", content: `taken over from ${parentId}` }],
    });
    await store.releaseCompressionLock!(parentId!, holder);
  }
  await store.close();
  console.log(JSON.stringify({ taken, tookMs }));
}
