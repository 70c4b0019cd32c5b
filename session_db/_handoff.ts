// The parked-handoff claim: the operations behind SessionDB's handoff methods.
import { crashPoint } from "./crash_points.ts";
import type { Connection } from "./_connection.ts";
import { HandoffOwnershipError } from "./errors.ts";
import { SESSION_COLUMNS, type SessionRow, toSession } from "./_rows.ts";
import { checkSessionId } from "./_validate.ts";
import type { Session } from "./types.ts";

export function requestHandoff(conn: Connection, sessionId: string, platform: string): boolean {
  checkSessionId(sessionId);
  return conn.write("requestHandoff", () => {
    conn.requireSession(sessionId);
    return conn.stmt(
      `UPDATE sessions SET handoff_state = 'pending', handoff_platform = ?, handoff_error = NULL
       WHERE id = ? AND (handoff_state IS NULL OR handoff_state IN ('completed', 'failed'))`,
    ).run(platform, sessionId) === 1;
  });
}

export function claimHandoff(conn: Connection, sessionId: string): boolean {
  checkSessionId(sessionId);
  const won = conn.write("claimHandoff", () => {
    const changed = conn.stmt(
      `UPDATE sessions SET handoff_state = 'running', handoff_owner_pid = ?
       WHERE id = ? AND handoff_state = 'pending'`,
    ).run(Deno.pid, sessionId);
    crashPoint("claimHandoff:afterUpdate");
    return changed === 1;
  });
  crashPoint("claimHandoff:afterCommit");
  return won;
}

/**
 * Completes a running handoff, fenced by its claimant: a process that lost its claim (it
 * stalled, another failed the handoff and claimed it anew) is refused with a typed error
 * and changes nothing.
 */
export function completeHandoff(conn: Connection, sessionId: string): boolean {
  return conn.write("completeHandoff", () => {
    const changed = conn.stmt(
      `UPDATE sessions SET handoff_state = 'completed'
       WHERE id = ? AND handoff_state = 'running' AND handoff_owner_pid = ?`,
    ).run(sessionId, Deno.pid);
    if (changed === 1) return true;
    const owner = conn.stmt(
      "SELECT handoff_owner_pid FROM sessions WHERE id = ? AND handoff_state = 'running'",
    ).value<[number | null]>(sessionId);
    if (owner) {
      throw new HandoffOwnershipError(
        `Cannot complete the handoff of session "${sessionId}": process ${
          owner[0]
        } holds its claim, not this one (pid ${Deno.pid}); a process that lost its claim must not complete it`,
      );
    }
    return false;
  });
}

export function failHandoff(conn: Connection, sessionId: string, error: string): boolean {
  return conn.write("failHandoff", () =>
    conn.stmt(
      `UPDATE sessions SET handoff_state = 'failed', handoff_error = ?
       WHERE id = ? AND handoff_state IN ('pending', 'running')`,
    ).run(error, sessionId) === 1);
}

export function listPendingHandoffs(conn: Connection): Session[] {
  return conn.stmt(
    `SELECT ${SESSION_COLUMNS} FROM sessions WHERE handoff_state = 'pending' ORDER BY started_at, id`,
  ).all<SessionRow>().map(toSession);
}
