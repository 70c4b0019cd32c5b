// The store's invariants, checked on the open database.
import { type Connection, oneOff } from "./_connection.ts";

export function checkInvariants(conn: Connection): string[] {
  const db = conn.database();
  const problems: string[] = [];
  const integrity = oneOff(db, "PRAGMA integrity_check", (q) => q.values<[string]>());
  if (integrity.length !== 1 || integrity[0]?.[0] !== "ok") {
    problems.push(`integrity_check: ${integrity.map((r) => r[0]).join("; ")}`);
  }
  const fk = oneOff(db, "PRAGMA foreign_key_check", (q) => q.values());
  if (fk.length) {
    problems.push(
      `foreign_key_check: ${fk.length} violation(s): ${JSON.stringify(fk.slice(0, 5))}`,
    );
  }
  const checks: [string, string][] = [
    [
      "message_count differs from active rows",
      `SELECT s.id || ' (' || s.message_count || ' vs ' || (SELECT count(*) FROM messages m WHERE m.session_id = s.id AND m.active = 1) || ')'
       FROM sessions s WHERE s.message_count != (SELECT count(*) FROM messages m WHERE m.session_id = s.id AND m.active = 1)`,
    ],
    [
      "compression orphan (ended by compression, no continuation)",
      `SELECT p.id FROM sessions p WHERE p.end_reason = 'compression' AND NOT EXISTS
       (SELECT 1 FROM sessions c WHERE c.parent_session_id = p.id AND c.branch_kind = 'continuation')`,
    ],
    [
      "more than one live continuation",
      `SELECT parent_session_id FROM sessions WHERE branch_kind = 'continuation' AND ended_at IS NULL
       GROUP BY parent_session_id HAVING count(*) > 1`,
    ],
    [
      "invalid handoff state",
      `SELECT id || ': ' || handoff_state FROM sessions
       WHERE handoff_state IS NOT NULL AND handoff_state NOT IN ('pending', 'running', 'completed', 'failed')`,
    ],
    [
      "ended without a reason, or a reason without an end",
      "SELECT id FROM sessions WHERE (ended_at IS NULL) != (end_reason IS NULL)",
    ],
    [
      "invalid branch kind",
      `SELECT id FROM sessions WHERE (branch_kind IS NOT NULL AND branch_kind NOT IN ('continuation', 'fork'))
       OR ((branch_kind IS NULL) != (parent_session_id IS NULL))`,
    ],
    [
      "invalid message role or active flag",
      `SELECT id FROM messages WHERE role NOT IN ('system', 'user', 'assistant', 'tool') OR active NOT IN (0, 1)`,
    ],
    [
      // Ids come from the AUTOINCREMENT sequence: from 1, never past the largest given.
      "message id the store never gave",
      `SELECT id FROM messages
       WHERE id < 1 OR id > (SELECT seq FROM sqlite_sequence WHERE name = 'messages')`,
    ],
    [
      "invalid obligation state",
      `SELECT obligation_id || ': ' || state FROM outbox
       WHERE state NOT IN ('pending', 'attempting', 'delivered', 'failed', 'unknown')
       OR (state IN ('failed', 'unknown') AND last_error IS NULL) OR delivery_fence < 0`,
    ],
  ];
  for (const [what, sql] of checks) {
    const rows = oneOff(db, sql, (q) => q.values<[string]>());
    if (rows.length) {
      problems.push(`${what}: ${rows.slice(0, 10).map((r) => r[0]).join(", ")}`);
    }
  }
  return problems;
}
