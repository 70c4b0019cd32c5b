// The rotation of the cell 7 mutants: the reference's publishCompressionChild in one
// transaction, with the lease check left to the caller (which each mutant weakens).
import { SessionEndedError } from "../../../session_db/mod.ts";
import type { Database } from "../../../session_db/sqlite/mod.ts";

/** A rotation to publish. */
export interface Publish {
  parentId: string;
  childId: string;
  holder: string;
  messages: { role: string; content: string }[];
}

/**
 * Publishes `publish` in one IMMEDIATE transaction after `leaseOk` approved the lock
 * row (`undefined` when there is none).
 */
export function publishWith(
  raw: Database,
  publish: Publish,
  leaseOk: (lock: { holder: string; expires_at: number } | undefined, now: number) => boolean,
): { id: string } {
  raw.transaction(() => {
    const t = Date.now() / 1000;
    const lock = raw.prepare(
      "SELECT holder, expires_at FROM compression_locks WHERE session_id = ?",
    ).get<{ holder: string; expires_at: number }>(publish.parentId);
    if (!leaseOk(lock, t)) throw new Error(`lock of ${publish.parentId} not held`);
    if (endParent(raw, publish, t) !== 1) {
      throw new SessionEndedError(`${publish.parentId} already ended`);
    }
    insertChild(raw, publish, t);
  }).immediate();
  return { id: publish.childId };
}

/**
 * Inserts a rotation's continuation child with its messages (inside the caller's
 * transaction), as the reference store does.
 *
 * @param raw The mutant's connection.
 * @param publish The rotation.
 * @param t The time, in seconds.
 */
export function insertChild(raw: Database, publish: Publish, t: number): void {
  raw.prepare(
    `INSERT INTO sessions (id, source, parent_session_id, branch_kind, started_at, message_count)
     VALUES (?, 'cli', ?, 'continuation', ?, ?)`,
  ).run(publish.childId, publish.parentId, t, publish.messages.length);
  for (const m of publish.messages) {
    raw.prepare(
      "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, ?, ?, ?)",
    ).run(publish.childId, m.role, m.content, t);
  }
}

/**
 * Refuses (throws) a rotation whose holder does not hold the parent's lease at `t`, as the
 * reference store checks it (inside the caller's transaction).
 *
 * @param raw The mutant's connection.
 * @param publish The rotation.
 * @param t The time, in seconds.
 */
export function requireLock(raw: Database, publish: Publish, t: number): void {
  const lock = raw.prepare(
    "SELECT holder FROM compression_locks WHERE session_id = ? AND expires_at > ?",
  ).value<[string]>(publish.parentId, t);
  if (lock?.[0] !== publish.holder) throw new Error("lock not held");
}

/**
 * Ends a rotation's parent by compression unless it already ended (inside the caller's
 * transaction), as the reference store does.
 *
 * @param raw The mutant's connection.
 * @param publish The rotation.
 * @param t The time, in seconds.
 * @returns The rows changed: 1, or 0 when the parent had already ended.
 */
export function endParent(raw: Database, publish: Publish, t: number): number {
  return raw.prepare(
    "UPDATE sessions SET ended_at = ?, end_reason = 'compression' WHERE id = ? AND ended_at IS NULL",
  ).run(t, publish.parentId);
}
