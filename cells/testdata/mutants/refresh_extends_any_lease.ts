/**
 * Mutant (cell 11): `refreshCompressionLock` pushes out the live lock's expiry without the
 * holder predicate, then answers whether the caller holds it: a stale holder's renewal is
 * refused, but it has extended the lease of whoever took the lock over.
 *
 * @module
 */
import type { StoreOptions } from "../../contract/target.ts";
import { mutantCrashPoints, openMutant } from "./_mutant.ts";

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openMutant(path, options, ({ raw }) => ({
    refreshCompressionLock(sessionId: string, holder: string, ttlMs: number) {
      const t = Date.now() / 1000;
      const changed = raw.prepare(
        "UPDATE compression_locks SET expires_at = ? WHERE session_id = ? AND expires_at > ?",
      ).run(t + ttlMs / 1000, sessionId, t);
      const row = raw.prepare("SELECT holder FROM compression_locks WHERE session_id = ?")
        .get<{ holder: string }>(sessionId);
      return changed === 1 && row?.holder === holder;
    },
  }));
}

/** The crash points it honours. */
export function crashPoints(): string[] {
  return mutantCrashPoints(["refreshCompressionLock"]);
}
