/**
 * Mutant (cell 4), a store written elsewhere: `forkSession` creates the branch session in
 * one transaction and copies its messages in a second one. A crash between them leaves
 * an empty branch. It declares no crash points, so only a kill inside the fork (the
 * cell's kill series over its file-system calls) can land in the gap.
 *
 * @module
 */
import type { StoreOptions } from "../../contract/target.ts";
import { mutantCrashPoints, openMutant } from "./_mutant.ts";

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openMutant(path, options, ({ store, raw }) => ({
    forkSession(sessionId: string, atMessageId: number, newId: string) {
      const t = Date.now() / 1000;
      raw.transaction(() => {
        raw.prepare(
          `INSERT INTO sessions (id, source, parent_session_id, branch_kind, started_at)
           SELECT ?, source, id, 'fork', ? FROM sessions WHERE id = ?`,
        ).run(newId, t, sessionId);
      }).immediate();
      raw.transaction(() => {
        const copied = raw.prepare(
          `INSERT INTO messages (session_id, role, content, timestamp)
           SELECT ?, role, content, timestamp FROM messages
           WHERE session_id = ? AND active = 1 AND id <= ? ORDER BY id`,
        ).run(newId, sessionId, atMessageId);
        raw.prepare("UPDATE sessions SET message_count = ? WHERE id = ?").run(copied, newId);
      }).immediate();
      return store.getSession(newId);
    },
  }));
}

/** The crash points it honours: none inside the fork. */
export function crashPoints(): string[] {
  return mutantCrashPoints(["forkSession"]);
}
