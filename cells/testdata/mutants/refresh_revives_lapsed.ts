/**
 * Mutant (cell 11): `refreshCompressionLock` renews a lapsed lease by writing its holder
 * back: a holder stopped past its lease takes the lock again on renewal, even after
 * another holder took it over.
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
      raw.prepare(
        `INSERT INTO compression_locks (session_id, holder, acquired_at, expires_at) VALUES (?, ?, ?, ?)
         ON CONFLICT(session_id) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at`,
      ).run(sessionId, holder, t, t + ttlMs / 1000);
      return true;
    },
  }));
}

/** The crash points it honours. */
export function crashPoints(): string[] {
  return mutantCrashPoints(["refreshCompressionLock"]);
}
