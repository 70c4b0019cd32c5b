/**
 * Mutant (cell 3), a store written elsewhere: `publishCompressionChild` ends the parent
 * in one transaction and creates the child in a second, like `rotation_two_transactions`
 * but declaring no crash point between them: only a kill inside the publish (the cell's
 * kill series over its file-system calls) can land in the gap.
 *
 * @module
 */
import type { StoreOptions } from "../../target.ts";
import { mutantCrashPoints, openMutant } from "./_mutant.ts";

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openMutant(path, options, ({ raw }) => ({
    publishCompressionChild(publish: {
      parentId: string;
      childId: string;
      holder: string;
      messages: { role: string; content: string }[];
    }) {
      const t = Date.now() / 1000;
      raw.transaction(() => {
        const lock = raw.prepare(
          "SELECT holder FROM compression_locks WHERE session_id = ? AND expires_at > ?",
        ).value<[string]>(publish.parentId, t);
        if (lock?.[0] !== publish.holder) throw new Error("lock not held");
        raw.prepare(
          "UPDATE sessions SET ended_at = ?, end_reason = 'compression' WHERE id = ? AND ended_at IS NULL",
        ).run(t, publish.parentId);
      }).immediate();
      raw.transaction(() => {
        raw.prepare(
          `INSERT INTO sessions (id, source, parent_session_id, branch_kind, started_at, message_count)
           VALUES (?, 'cli', ?, 'continuation', ?, ?)`,
        ).run(publish.childId, publish.parentId, t, publish.messages.length);
        for (const m of publish.messages) {
          raw.prepare(
            "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, ?, ?, ?)",
          ).run(publish.childId, m.role, m.content, t);
        }
      }).immediate();
    },
  }));
}

/** The crash points it honours: none inside the publish. */
export function crashPoints(): string[] {
  return mutantCrashPoints(["publishCompressionChild"]);
}
