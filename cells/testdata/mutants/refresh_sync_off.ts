/**
 * Mutant (power-loss tier, cell 11): `refreshCompressionLock` commits with
 * `synchronous=OFF`, in one transaction as the reference does. A SIGKILL keeps the page
 * cache, so the SIGKILL cell 11 stays GREEN; a power loss drops an acknowledged renewal,
 * and another holder takes the lock over once the short lease has passed.
 *
 * @module
 */
import type { StoreOptions } from "../../contract/target.ts";
import { mutantCrashPoints, openUnsyncedMutant } from "./_mutant.ts";

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openUnsyncedMutant(path, options, ({ raw }) => ({
    refreshCompressionLock: (sessionId: string, holder: string, ttlMs: number) =>
      raw.transaction(() => {
        const t = Date.now() / 1000;
        return raw.prepare(
          `UPDATE compression_locks SET expires_at = ?
           WHERE session_id = ? AND holder = ? AND expires_at > ?`,
        ).run(t + ttlMs / 1000, sessionId, holder, t) === 1;
      }).immediate(),
  }));
}

/** The crash points it honours: none in a renewal. */
export function crashPoints(): string[] {
  return mutantCrashPoints(["refreshCompressionLock"]);
}
