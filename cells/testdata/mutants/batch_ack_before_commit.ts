/**
 * Mutant (cell 9): `appendMessages` returns the batch's ids before COMMIT; the transaction
 * is committed only when the store's next call starts. A crash right after the
 * acknowledgement loses the whole acknowledged batch.
 *
 * @module
 */
import type { StoreOptions } from "../../contract/target.ts";
import { insertAppend, mutantCrashPoints, openMutant, refuseUnwritable } from "./_mutant.ts";

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openMutant(path, options, ({ raw }) => ({
    appendMessages(sessionId: string, messages: { role: string; content: string }[]) {
      if (raw.inTransaction) raw.exec("COMMIT");
      raw.exec("BEGIN IMMEDIATE");
      refuseUnwritable(raw, sessionId);
      return messages.map((message) => insertAppend(raw, sessionId, message)); // not committed
    },
  }));
}

/** The crash points it honours. */
export function crashPoints(): string[] {
  return mutantCrashPoints(["appendMessages"]);
}
