/**
 * Mutant (cell 10): `appendMessage` refuses only a session rotated by compression; one
 * ended by `endSession` takes the append.
 *
 * @module
 */
import { CompressionSessionClosedError, SessionNotFoundError } from "../../../session_db/mod.ts";
import type { StoreOptions } from "../../contract/target.ts";
import { insertAppend, mutantCrashPoints, openMutant } from "./_mutant.ts";

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openMutant(path, options, ({ raw }) => ({
    appendMessage(sessionId: string, message: { role: string; content: string }) {
      return raw.transaction(() => {
        const row = raw.prepare("SELECT end_reason FROM sessions WHERE id = ?")
          .value<[string | null]>(sessionId);
        if (!row) throw new SessionNotFoundError(`Unknown session "${sessionId}"`);
        if (row[0] === "compression") {
          throw new CompressionSessionClosedError(`Session "${sessionId}" was rotated`);
        }
        return insertAppend(raw, sessionId, message);
      }).immediate();
    },
  }));
}

/** The crash points it honours. */
export function crashPoints(): string[] {
  return mutantCrashPoints(["appendMessage"]);
}
