/**
 * Mutant (cell 3), a store written elsewhere: `tryAcquireCompressionLock` takes over
 * another holder's lock only once it has expired; a dead holder's lock stays taken for
 * its whole TTL (here an hour) instead of being recoverable at once. It declares no
 * crash points.
 *
 * @module
 */
import type { StoreOptions } from "../../contract/target.ts";
import { openMutant } from "./_mutant.ts";

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openMutant(path, options, ({ raw }) => ({
    tryAcquireCompressionLock(sessionId: string, holder: string, ttlMs: number) {
      return raw.transaction(() => {
        const t = Date.now() / 1000;
        const lock = raw.prepare(
          "SELECT holder, expires_at FROM compression_locks WHERE session_id = ?",
        ).get<{ holder: string; expires_at: number }>(sessionId);
        if (lock && lock.holder !== holder && lock.expires_at > t) return false;
        raw.prepare(
          `INSERT INTO compression_locks (session_id, holder, acquired_at, expires_at)
           VALUES (?, ?, ?, ?) ON CONFLICT(session_id) DO UPDATE SET holder = excluded.holder,
             acquired_at = excluded.acquired_at, expires_at = excluded.expires_at`,
        ).run(sessionId, holder, t, t + ttlMs / 1000);
        return true;
      }).immediate();
    },
  }));
}
