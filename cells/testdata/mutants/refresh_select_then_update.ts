/**
 * Mutant (cell 11): `refreshCompressionLock` reads the lock, then updates its expiry
 * without the holder predicate: a takeover between the two is extended, and the renewal
 * acknowledged to the holder that lost the lock.
 *
 * @module
 */
import type { StoreOptions } from "../../contract/target.ts";
import { mutantCrashPoints, openMutant } from "./_mutant.ts";

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openMutant(path, options, ({ raw }) => ({
    refreshCompressionLock(sessionId: string, holder: string, ttlMs: number) {
      const lock = raw.prepare(
        "SELECT holder, expires_at FROM compression_locks WHERE session_id = ?",
      ).get<{ holder: string; expires_at: number }>(sessionId);
      if (!lock || lock.holder !== holder || lock.expires_at <= Date.now() / 1000) return false;
      raw.prepare("UPDATE compression_locks SET expires_at = ? WHERE session_id = ?").run(
        Date.now() / 1000 + ttlMs / 1000,
        sessionId,
      );
      return true;
    },
  }));
}

/** The crash points it honours. */
export function crashPoints(): string[] {
  return mutantCrashPoints(["refreshCompressionLock"]);
}
