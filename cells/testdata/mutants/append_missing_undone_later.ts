/**
 * Mutant (cell 13), a store written elsewhere: `appendMessage` to a session that does not
 * exist creates the session and its message in one transaction, then sees the session was
 * missing, deletes both in a second transaction and throws the typed error. Once it
 * returns nothing is left, but a crash between the two leaves the created session. It
 * declares no crash point in the append, so only a kill inside the refusal (the cell's
 * kill series over its file-system calls) lands in the gap.
 *
 * @module
 */
import { SessionNotFoundError } from "../../../session_db/mod.ts";
import type { StoreOptions } from "../../contract/target.ts";
import { insertAppend, mutantCrashPoints, openMutant } from "./_mutant.ts";
export { plantViolation } from "../../reference_target.ts";

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openMutant(path, options, ({ store, raw }) => ({
    appendMessage(sessionId: string, message: { role: "user"; content: string }) {
      if (store.getSession(sessionId)) return store.appendMessage(sessionId, message);
      raw.transaction(() => {
        raw.prepare("INSERT INTO sessions (id, started_at) VALUES (?, ?)").run(
          sessionId,
          Date.now() / 1000,
        );
        insertAppend(raw, sessionId, message);
      }).immediate();
      raw.transaction(() => {
        raw.prepare("DELETE FROM messages WHERE session_id = ?").run(sessionId);
        raw.prepare("DELETE FROM sessions WHERE id = ?").run(sessionId);
      }).immediate();
      throw new SessionNotFoundError(`Unknown session "${sessionId}"`);
    },
  }));
}

/** The crash points it honours: none inside the append. */
export function crashPoints(): string[] {
  return mutantCrashPoints(["appendMessage"]);
}
