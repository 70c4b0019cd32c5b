/**
 * The store's statements on its append path, as the store runs them: one home, so that
 * a replica that measures them (the bench) runs the very same SQL.
 *
 * @example
 * ```ts
 * import { APPEND_SQL } from "./statements.ts";
 * console.log(APPEND_SQL.begin); // "BEGIN IMMEDIATE"
 * ```
 *
 * @module
 */
import { SESSION_COLUMNS } from "./_rows.ts";

/** The append path's statements, by the step that runs each. */
export const APPEND_SQL = {
  /** Every write's transaction opens with the write lock. */
  begin: "BEGIN IMMEDIATE",
  /** And ends. */
  commit: "COMMIT",
  /** `appendMessage` checks the session with one column. */
  selectAppendable: "SELECT end_reason FROM sessions WHERE id = ?",
  /** `appendMessages` (and other writes) read the whole session row. */
  selectSession: `SELECT ${SESSION_COLUMNS} FROM sessions WHERE id = ?`,
  /** One message row. */
  insertMessage:
    `INSERT INTO messages (session_id, role, content, tool_call_id, tool_calls, tool_name, timestamp)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
  /** `appendMessage`'s count. */
  updateOne: "UPDATE sessions SET message_count = message_count + 1 WHERE id = ?",
  /** `appendMessages`' count. */
  updateMany: "UPDATE sessions SET message_count = message_count + ? WHERE id = ?",
  /** `createSession`: a new session, or a missing title filled. */
  createSession: `INSERT INTO sessions (id, source, started_at, title) VALUES (?, ?, ?, ?)
         ON CONFLICT(id) DO UPDATE SET title = COALESCE(sessions.title, excluded.title)`,
} as const;
