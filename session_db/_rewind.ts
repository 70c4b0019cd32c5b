// Rewind and fork: the operations behind SessionDB.rewindToMessage and forkSession.
import { crashPoint } from "./crash_points.ts";
import { CompressionLockError, InvalidArgumentError, RewindConflictError } from "./errors.ts";
import { type Connection, now } from "./_connection.ts";
import { lockLive, readLock } from "./_rotation.ts";
import { checkSessionId } from "./_validate.ts";
import type { Session } from "./types.ts";

export function rewindToMessage(
  conn: Connection,
  sessionId: string,
  options: { targetId: number; expectedActiveIds?: readonly number[] | undefined },
): number {
  const { targetId } = options;
  checkSessionId(sessionId);
  const deactivated = conn.write("rewindToMessage", () => {
    conn.requireWritable(sessionId, "rewind");
    const target = conn.stmt(
      "SELECT role, active FROM messages WHERE id = ? AND session_id = ?",
    ).get<{ role: string; active: number }>(targetId, sessionId);
    if (!target || target.role !== "user" || target.active !== 1) {
      throw new InvalidArgumentError(
        `Cannot rewind session "${sessionId}" to message ${targetId}: it is not an active user message of that session`,
      );
    }
    const lock = readLock(conn, sessionId);
    if (lock && lockLive(lock)) {
      throw new CompressionLockError(
        `Cannot rewind session "${sessionId}": a compression holds its lock ("${lock.holder}"); retry after it finishes`,
      );
    }
    if (options.expectedActiveIds) {
      const active = activeIds(conn, sessionId);
      const expected = options.expectedActiveIds;
      if (active.length !== expected.length || active.some((id, i) => id !== expected[i])) {
        throw new RewindConflictError(
          `Cannot rewind session "${sessionId}": its active messages changed (expected ${expected.length} ids ending ${
            expected.at(-1) ?? "none"
          }, found ${active.length} ending ${
            active.at(-1) ?? "none"
          }); reload the transcript and retry`,
        );
      }
    }
    crashPoint("rewindToMessage:afterVerify");
    const changed = conn.stmt(
      "UPDATE messages SET active = 0 WHERE session_id = ? AND id >= ? AND active = 1",
    ).run(sessionId, targetId);
    crashPoint("rewindToMessage:afterDeactivate");
    conn.stmt(
      `UPDATE sessions SET message_count = message_count - ?, rewind_count = rewind_count + 1
       WHERE id = ?`,
    ).run(changed, sessionId);
    crashPoint("rewindToMessage:afterCount");
    return changed;
  });
  crashPoint("rewindToMessage:afterCommit");
  return deactivated;
}

export function forkSession(
  conn: Connection,
  sessionId: string,
  branch: { atMessageId: number; newId: string },
): Session {
  const { atMessageId, newId } = branch;
  checkSessionId(sessionId);
  checkSessionId(newId, "branch session id");
  conn.write("forkSession", () => {
    const parent = conn.requireSession(sessionId);
    const at = conn.stmt(
      "SELECT 1 FROM messages WHERE id = ? AND session_id = ? AND active = 1",
    ).value(atMessageId, sessionId);
    if (!at) {
      throw new InvalidArgumentError(
        `Cannot fork session "${sessionId}" at message ${atMessageId}: it is not an active message of that session`,
      );
    }
    if (conn.session(newId)) {
      throw new InvalidArgumentError(
        `Cannot fork session "${sessionId}" into "${newId}": that session already exists (choose another id)`,
      );
    }
    conn.stmt(
      `INSERT INTO sessions (id, source, parent_session_id, branch_kind, started_at, title)
       VALUES (?, ?, ?, 'fork', ?, ?)`,
    ).run(newId, parent.source, sessionId, now(), parent.title);
    crashPoint("forkSession:afterCreate");
    const copied = conn.stmt(
      `INSERT INTO messages (session_id, role, content, tool_call_id, tool_calls, tool_name, timestamp)
       SELECT ?, role, content, tool_call_id, tool_calls, tool_name, timestamp FROM messages
       WHERE session_id = ? AND active = 1 AND id <= ? ORDER BY id`,
    ).run(newId, sessionId, atMessageId);
    crashPoint("forkSession:afterCopy");
    conn.stmt("UPDATE sessions SET message_count = ? WHERE id = ?").run(copied, newId);
    crashPoint("forkSession:afterCount");
  });
  crashPoint("forkSession:afterCommit");
  return conn.session(newId)!;
}

function activeIds(conn: Connection, sessionId: string): number[] {
  return conn.stmt(
    "SELECT id FROM messages WHERE session_id = ? AND active = 1 ORDER BY id",
  ).values<[number]>(sessionId).map((r) => r[0]);
}
