// Compression rotation: the operations behind SessionDB's compression-lock, publish and
// resume methods.
import { crashPoint } from "./crash_points.ts";
import { CompressionLockError, InvalidArgumentError, SessionEndedError } from "./errors.ts";
import { processAlive } from "./process.ts";
import { type Connection, now } from "./_connection.ts";
import { SESSION_COLUMNS, type SessionRow, toSession } from "./_rows.ts";
import { checkMessage, checkSessionId } from "./_validate.ts";
import type { CompressionPublish, Session } from "./types.ts";

/** A session's compression lock row. */
export type LockRow = { holder: string; expires_at: number };

/** The session's compression lock, or `undefined`. */
export function readLock(conn: Connection, sessionId: string): LockRow | undefined {
  return conn.stmt(
    "SELECT holder, expires_at FROM compression_locks WHERE session_id = ?",
  ).get<LockRow>(sessionId);
}

/** Whether a lock still holds: unexpired, and its holder's `pid=N` (if named) alive. */
export function lockLive(lock: LockRow): boolean {
  if (lock.expires_at <= now()) return false;
  const pid = pidOfHolder(lock.holder);
  return pid === undefined || processAlive(pid);
}

function pidOfHolder(holder: string): number | undefined {
  const match = /pid=(\d+)/.exec(holder);
  return match ? Number(match[1]) : undefined;
}

/** Who asks for a session's compression lock, and for how long. */
export type Lease = { holder: string; ttlMs: number };

export function tryAcquireCompressionLock(
  conn: Connection,
  sessionId: string,
  lease: Lease,
): boolean {
  const { holder, ttlMs } = lease;
  checkSessionId(sessionId);
  return conn.write("tryAcquireCompressionLock", () => {
    conn.requireSession(sessionId);
    const lock = readLock(conn, sessionId);
    if (lock && lock.holder !== holder && lockLive(lock)) return false;
    const t = now();
    conn.stmt(
      `INSERT INTO compression_locks (session_id, holder, acquired_at, expires_at) VALUES (?, ?, ?, ?)
       ON CONFLICT(session_id) DO UPDATE SET holder = excluded.holder,
         acquired_at = excluded.acquired_at, expires_at = excluded.expires_at`,
    ).run(sessionId, holder, t, t + ttlMs / 1000);
    return true;
  });
}

export function refreshCompressionLock(
  conn: Connection,
  sessionId: string,
  lease: Lease,
): boolean {
  const { holder, ttlMs } = lease;
  return conn.write("refreshCompressionLock", () => {
    const t = now();
    return conn.stmt(
      `UPDATE compression_locks SET expires_at = ?
       WHERE session_id = ? AND holder = ? AND expires_at > ?`,
    ).run(t + ttlMs / 1000, sessionId, holder, t) === 1;
  });
}

export function releaseCompressionLock(
  conn: Connection,
  sessionId: string,
  holder: string,
): boolean {
  return conn.write(
    "releaseCompressionLock",
    () =>
      conn.stmt("DELETE FROM compression_locks WHERE session_id = ? AND holder = ?").run(
        sessionId,
        holder,
      ) === 1,
  );
}

export function publishCompressionChild(conn: Connection, publish: CompressionPublish): Session {
  const { parentId, childId, holder, messages } = publish;
  checkSessionId(parentId, "parent session id");
  checkSessionId(childId, "child session id");
  messages.forEach(checkMessage);
  conn.write("publishCompressionChild", () => {
    const lock = readLock(conn, parentId);
    if (!lock || lock.holder !== holder || lock.expires_at <= now()) {
      throw new CompressionLockError(
        `Cannot publish compression of "${parentId}": the lock is not held by "${holder}" (${
          lock ? `held by "${lock.holder}", expires ${lock.expires_at}` : "no lock"
        }; acquire it with tryAcquireCompressionLock)`,
      );
    }
    const parent = conn.requireSession(parentId);
    if (parent.ended_at !== null) {
      throw new SessionEndedError(
        `Cannot publish compression of "${parentId}": it already ended (${parent.end_reason})`,
      );
    }
    if (conn.session(childId)) {
      throw new InvalidArgumentError(
        `Cannot publish compression of "${parentId}" into "${childId}": that session already exists (choose another id)`,
      );
    }
    crashPoint("publishCompressionChild:afterVerify");
    const t = now();
    conn.stmt(
      `INSERT INTO sessions (id, source, parent_session_id, branch_kind, started_at, title)
       VALUES (?, ?, ?, 'continuation', ?, ?)`,
    ).run(childId, parent.source, parentId, t, publish.title ?? parent.title);
    crashPoint("publishCompressionChild:afterChildInsert");
    for (const message of messages) conn.insertMessage(childId, message);
    conn.stmt("UPDATE sessions SET message_count = ? WHERE id = ?").run(
      messages.length,
      childId,
    );
    crashPoint("publishCompressionChild:afterMessages");
    const ended = conn.stmt(
      `UPDATE sessions SET ended_at = ?, end_reason = 'compression'
       WHERE id = ? AND ended_at IS NULL`,
    ).run(t, parentId);
    if (ended !== 1) {
      throw new SessionEndedError(`Cannot publish compression of "${parentId}": it ended`);
    }
    crashPoint("publishCompressionChild:afterParentEnd");
  });
  crashPoint("publishCompressionChild:afterCommit");
  return conn.session(childId)!;
}

export function findLiveCompressionChild(conn: Connection, parentId: string): Session | undefined {
  const row = conn.stmt(
    `SELECT ${SESSION_COLUMNS} FROM sessions
     WHERE parent_session_id = ? AND branch_kind = 'continuation' AND ended_at IS NULL
     ORDER BY started_at DESC, id DESC LIMIT 1`,
  ).get<SessionRow>(parentId);
  return row ? toSession(row) : undefined;
}

export function reopenOrphanedCompressionSession(conn: Connection, sessionId: string): boolean {
  checkSessionId(sessionId);
  return conn.write("reopenOrphanedCompressionSession", () => {
    const session = conn.requireSession(sessionId);
    if (session.end_reason !== "compression") return false;
    const child = conn.stmt("SELECT 1 FROM sessions WHERE parent_session_id = ? LIMIT 1")
      .value(sessionId);
    if (child) return false;
    const lock = readLock(conn, sessionId);
    if (lock && lockLive(lock)) return false;
    return conn.stmt(
      `UPDATE sessions SET ended_at = NULL, end_reason = NULL
       WHERE id = ? AND end_reason = 'compression'`,
    ).run(sessionId) === 1;
  });
}

export function resolveResumeSessionId(conn: Connection, sessionId: string): string {
  let current = sessionId;
  const seen = new Set<string>();
  while (!seen.has(current)) {
    seen.add(current);
    const session = conn.session(current);
    if (!session || session.endReason !== "compression") return current;
    const next = conn.continuationOf(current);
    if (!next) return current;
    current = next;
  }
  return current;
}
