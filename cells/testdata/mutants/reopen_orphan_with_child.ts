/**
 * Mutant (cell 8): `reopenOrphanedCompressionSession` does not look for a continuation: it
 * reopens any session ended by compression whose lock holder is gone, even one whose
 * published child lives (two live sessions in one chain).
 *
 * @module
 */
import { processAlive } from "../../../session_db/process.ts";
import type { StoreOptions } from "../../contract/target.ts";
import { mutantCrashPoints, openMutant, reopenCompressed } from "./_mutant.ts";

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openMutant(path, options, ({ raw }) => ({
    reopenOrphanedCompressionSession(sessionId: string) {
      // The lock guard alone: a published continuation is not looked for.
      return reopenCompressed(raw, sessionId, () => {
        const lock = raw.prepare(
          "SELECT holder, expires_at FROM compression_locks WHERE session_id = ?",
        ).get<{ holder: string; expires_at: number }>(sessionId);
        const pid = Number(/pid=(\d+)/.exec(lock?.holder ?? "")?.[1] ?? NaN);
        return lock !== undefined && lock.expires_at > Date.now() / 1000 &&
          (Number.isNaN(pid) || processAlive(pid));
      });
    },
  }));
}

/** The crash points it honours: the reference store's. */
export function crashPoints(): string[] {
  return mutantCrashPoints([]);
}
