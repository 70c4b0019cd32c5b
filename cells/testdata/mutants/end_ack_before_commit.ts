/**
 * Mutant (cell 10): `endSession` returns `true` before COMMIT; the transaction is
 * committed only when the store's next call starts. A crash right after the
 * acknowledgement loses the end: the session is open again.
 *
 * @module
 */
import type { StoreOptions } from "../../contract/target.ts";
import { mutantCrashPoints, openMutant } from "./_mutant.ts";

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openMutant(path, options, ({ raw }) => ({
    endSession(id: string, reason: string) {
      if (raw.inTransaction) raw.exec("COMMIT");
      raw.exec("BEGIN IMMEDIATE");
      return raw.prepare(
        "UPDATE sessions SET ended_at = ?, end_reason = ? WHERE id = ? AND ended_at IS NULL",
      ).run(Date.now() / 1000, reason, id) === 1; // acknowledged, not committed
    },
  }));
}

/** The crash points it honours. */
export function crashPoints(): string[] {
  return mutantCrashPoints(["endSession"]);
}
