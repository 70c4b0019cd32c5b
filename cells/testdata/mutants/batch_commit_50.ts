/**
 * Mutant (cell 1): `appendMessage` commits in batches of 50: it returns each row id at
 * once, but COMMITs only every 50th append (or when another operation comes). A crash
 * loses up to 49 acknowledged appends.
 *
 * @module
 */
import type { StoreOptions } from "../../contract/target.ts";
import { insertAppend, mutantCrashPoints, openMutant, refuseUnwritable } from "./_mutant.ts";

const BATCH = 50;

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  let pending = 0;
  return openMutant(path, options, ({ raw }) => ({
    appendMessage(sessionId: string, message: { role: string; content: string }) {
      if (!raw.inTransaction) {
        raw.exec("BEGIN IMMEDIATE");
        pending = 0;
      }
      refuseUnwritable(raw, sessionId);
      const id = insertAppend(raw, sessionId, message);
      if (++pending === BATCH) raw.exec("COMMIT");
      return id; // acknowledged; committed with the batch
    },
  }));
}

/** The crash points it honours. */
export function crashPoints(): string[] {
  return mutantCrashPoints(["appendMessage"]);
}
