/**
 * Mutant (cell 6): `appendMessage` reads, then (after a short pause, as an await in
 * between would) writes, in a DEFERRED transaction, and does not retry: when another process wrote in between, SQLite refuses the lock
 * upgrade at once (no busy wait can help) and the raw SQLITE_BUSY reaches the caller,
 * an error of no documented type.
 *
 * @module
 */
import type { StoreOptions } from "../../contract/target.ts";
import { insertAppend, mutantCrashPoints, openMutant, pause, refuseUnwritable } from "./_mutant.ts";

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openMutant(path, options, ({ raw }) => ({
    appendMessage(sessionId: string, message: { role: string; content: string }) {
      return raw.transaction(() => {
        refuseUnwritable(raw, sessionId); // the read: a SHARED lock / a read snapshot
        pause(5); // e.g. an await between the read and the write
        return insertAppend(raw, sessionId, message);
      }).deferred();
    },
  }));
}

/** The crash points it honours. */
export function crashPoints(): string[] {
  return mutantCrashPoints(["appendMessage"]);
}
