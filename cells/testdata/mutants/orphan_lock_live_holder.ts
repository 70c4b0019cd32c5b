/**
 * Mutant (cell 8): `reopenOrphanedCompressionSession` does not look at the compression
 * lock: it reopens an orphan (ended by compression, no continuation) while its rotator
 * still holds the lock and lives, under the rotator's feet.
 *
 * @module
 */
import type { StoreOptions } from "../../contract/target.ts";
import { mutantCrashPoints, openMutant } from "./_mutant.ts";

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openMutant(path, options, ({ raw }) => ({
    reopenOrphanedCompressionSession(sessionId: string) {
      return raw.transaction(() => {
        const child = raw.prepare("SELECT 1 FROM sessions WHERE parent_session_id = ? LIMIT 1")
          .value(sessionId);
        if (child) return false;
        return raw.prepare(
          `UPDATE sessions SET ended_at = NULL, end_reason = NULL
           WHERE id = ? AND end_reason = 'compression'`,
        ).run(sessionId) === 1;
      }).immediate();
    },
  }));
}

/** The crash points it honours: the reference store's. */
export function crashPoints(): string[] {
  return mutantCrashPoints([]);
}
