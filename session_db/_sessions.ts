// A session's life: the operations behind SessionDB's create, end and reopen.
import { APPEND_SQL } from "./statements.ts";
import { CompressionSessionClosedError } from "./errors.ts";
import { type Connection, now } from "./_connection.ts";
import { checkSessionId, checkText } from "./_validate.ts";
import type { NewSession } from "./types.ts";

export function createSession(conn: Connection, id: string, options: NewSession): void {
  checkSessionId(id);
  checkText(options.source, "session source");
  checkText(options.title, "session title");
  conn.write("createSession", () => {
    conn.stmt(APPEND_SQL.createSession).run(
      id,
      options.source ?? "cli",
      now(),
      options.title ?? null,
    );
  });
}

export function endSession(conn: Connection, id: string, reason: string): boolean {
  checkSessionId(id);
  return conn.write("endSession", () => {
    conn.requireSession(id);
    return conn.stmt(
      "UPDATE sessions SET ended_at = ?, end_reason = ? WHERE id = ? AND ended_at IS NULL",
    ).run(now(), reason, id) === 1;
  });
}

export function reopenSession(conn: Connection, id: string): boolean {
  checkSessionId(id);
  return conn.write("reopenSession", () => {
    const session = conn.requireSession(id);
    if (session.end_reason === "compression" && conn.continuationOf(id)) {
      throw new CompressionSessionClosedError(
        `Cannot reopen session "${id}": it was rotated by compression into "${
          conn.continuationOf(id)
        }" (resume that session instead)`,
      );
    }
    return conn.stmt(
      "UPDATE sessions SET ended_at = NULL, end_reason = NULL WHERE id = ? AND ended_at IS NOT NULL",
    ).run(id) === 1;
  });
}
