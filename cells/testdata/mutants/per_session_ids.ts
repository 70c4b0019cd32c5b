/**
 * Mutant (cell 6): message ids are numbered per session (1, 2, 3, … in each one, as a
 * `(session, seq)` key would give) instead of across the store. Each session's ids
 * still increase, but an append acknowledged in a long session has a larger id than a
 * later append to a short one.
 *
 * @module
 */
import type { StoreOptions } from "../../contract/target.ts";
import { insertAppend, mutantCrashPoints, openMutant, refuseUnwritable } from "./_mutant.ts";

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openMutant(path, options, ({ raw }) => ({
    appendMessage(sessionId: string, message: { role: string; content: string }) {
      return raw.transaction(() => {
        refuseUnwritable(raw, sessionId);
        insertAppend(raw, sessionId, message);
        return raw.prepare("SELECT count(*) FROM messages WHERE session_id = ?")
          .value<[number]>(sessionId)![0];
      }).immediate();
    },
    getMessages(sessionId: string, options: { includeInactive?: boolean } = {}) {
      return raw.prepare(
        `SELECT row_number() OVER (ORDER BY id) AS seq, role, content, active FROM messages
         WHERE session_id = ? ORDER BY id`,
      ).all<{ seq: number; role: string; content: string | null; active: number }>(sessionId)
        .filter((row) => options.includeInactive || row.active === 1)
        .map((row) => ({
          id: row.seq,
          role: row.role,
          content: row.content,
          active: row.active === 1,
        }));
    },
  }));
}

/** The crash points it honours. */
export function crashPoints(): string[] {
  return mutantCrashPoints(["appendMessage"]);
}
