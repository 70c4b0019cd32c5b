/**
 * Mutant (cell 11): `refreshCompressionLock` extends the session's live lock whoever holds
 * it: a holder whose lease lapsed and was taken over renews the new holder's lease, and is
 * told it renewed its own.
 *
 * @module
 */
import type { StoreOptions } from "../../contract/target.ts";
import { mutantCrashPoints, openMutant } from "./_mutant.ts";

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openMutant(path, options, ({ raw }) => ({
    refreshCompressionLock(sessionId: string, _holder: string, ttlMs: number) {
      const t = Date.now() / 1000;
      return raw.prepare(
        "UPDATE compression_locks SET expires_at = ? WHERE session_id = ? AND expires_at > ?",
      ).run(t + ttlMs / 1000, sessionId, t) === 1;
    },
  }));
}

/** The crash points it honours. */
export function crashPoints(): string[] {
  return mutantCrashPoints(["refreshCompressionLock"]);
}
