/**
 * Mutant (cell 1): `appendMessage` returns the row id before COMMIT; the transaction
 * is committed only when the next append starts. A crash loses the last acknowledged
 * append.
 *
 * @module
 */
import type { StoreOptions } from "../../contract/target.ts";
import { insertAppend, mutantCrashPoints, openMutant, refuseUnwritable } from "./_mutant.ts";

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openMutant(path, options, ({ raw }) => ({
    appendMessage(sessionId: string, message: { role: string; content: string }) {
      if (raw.inTransaction) raw.exec("COMMIT");
      raw.exec("BEGIN IMMEDIATE");
      refuseUnwritable(raw, sessionId);
      return insertAppend(raw, sessionId, message); // acknowledged, not committed
    },
  }));
}

/** The crash points it honours. */
export function crashPoints(): string[] {
  return mutantCrashPoints(["appendMessage"]);
}
