/**
 * Mutant (cell 8): `reopenOrphanedCompressionSession` does not look at the compression
 * lock: it reopens an orphan (ended by compression, no continuation) while its rotator
 * still holds the lock and lives, under the rotator's feet.
 *
 * @module
 */
import type { StoreOptions } from "../../contract/target.ts";
import { mutantCrashPoints, openMutant, reopenCompressed } from "./_mutant.ts";

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openMutant(path, options, ({ raw }) => ({
    reopenOrphanedCompressionSession(sessionId: string) {
      // The continuation guard alone: a live holder's lock is not looked at.
      return reopenCompressed(
        raw,
        sessionId,
        () =>
          raw.prepare("SELECT 1 FROM sessions WHERE parent_session_id = ? LIMIT 1")
            .value(sessionId) !== undefined,
      );
    },
  }));
}

/** The crash points it honours: the reference store's. */
export function crashPoints(): string[] {
  return mutantCrashPoints([]);
}
