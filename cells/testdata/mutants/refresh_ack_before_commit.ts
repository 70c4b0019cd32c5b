/**
 * Mutant (cell 11): `refreshCompressionLock` returns before COMMIT; the transaction is
 * committed only by the next write or the close. A holder killed right after the
 * acknowledgement loses its renewal.
 *
 * @module
 */
import type { StoreOptions } from "../../contract/target.ts";
import { mutantCrashPoints, openMutant } from "./_mutant.ts";

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openMutant(path, options, ({ raw }) => ({
    refreshCompressionLock(sessionId: string, holder: string, ttlMs: number) {
      if (raw.inTransaction) raw.exec("COMMIT");
      raw.exec("BEGIN IMMEDIATE");
      const t = Date.now() / 1000;
      return raw.prepare(
        `UPDATE compression_locks SET expires_at = ?
         WHERE session_id = ? AND holder = ? AND expires_at > ?`,
      ).run(t + ttlMs / 1000, sessionId, holder, t) === 1; // acknowledged, not committed
    },
  }));
}

/** The crash points it honours. */
export function crashPoints(): string[] {
  return mutantCrashPoints(["refreshCompressionLock"]);
}
