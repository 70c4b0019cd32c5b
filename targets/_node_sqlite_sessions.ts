// The node:sqlite peer's session lifecycle, batches, lease renewal, resume and handoff
// listing: the contract's optional methods of cells 8 to 12, written from its prose.
import type { CellMessage, StoredSession } from "../cells/contract/target.ts";
import {
  CompressionSessionClosedError,
  type Connection,
  holderPid,
  processAlive,
  SessionEndedError,
  SessionNotFoundError,
} from "./_node_sqlite_db.ts";

type Row = Record<string, unknown>;
const text = (value: unknown) => value === null || value === undefined ? null : String(value);

/** A session row as the cells read it. */
export function sessionOf(row: Row): StoredSession {
  return {
    id: String(row.id),
    parentSessionId: text(row.parent_session_id),
    endedAt: row.ended_at === null ? null : Number(row.ended_at),
    endReason: text(row.end_reason),
    handoffState: text(row.handoff_state),
  };
}

/** The sessions on one connection. */
export class Sessions {
  readonly #c: Connection;

  constructor(connection: Connection) {
    this.#c = connection;
  }

  /** The session row, or `undefined`. */
  row(id: string): Row | undefined {
    return this.#c.db.prepare("SELECT * FROM sessions WHERE id = ?").get(id);
  }

  /** The session row; {@linkcode SessionNotFoundError} when it does not exist. */
  existing(id: string): Row {
    const row = this.row(id);
    if (!row) throw new SessionNotFoundError(`Session "${id}" does not exist`);
    return row;
  }

  /** The session row when it takes appends; a typed error naming why when not. */
  writable(id: string): Row {
    const session = this.existing(id);
    if (session.end_reason === "compression") {
      throw new CompressionSessionClosedError(
        `Cannot append to session "${id}": a compression rotation ended it`,
      );
    }
    if (session.ended_at !== null) {
      throw new SessionEndedError(
        `Cannot append to session "${id}": it ended (${session.end_reason})`,
      );
    }
    return session;
  }

  /** Inserts one message into a writable session (inside a write); returns its id. */
  insert(sessionId: string, message: CellMessage): number {
    return Number(
      this.#c.db.prepare("INSERT INTO messages (session_id, role, content) VALUES (?, ?, ?)")
        .run(sessionId, message.role, message.content).lastInsertRowid,
    );
  }

  /** Appends messages in one transaction; their ids once committed (`[]` for none). */
  appendMessages(sessionId: string, messages: CellMessage[]): Promise<number[]> {
    return this.#c.write("append messages", () => {
      this.writable(sessionId);
      return messages.map((message) => this.insert(sessionId, message));
    });
  }

  /** The number of active messages of a session. */
  messageCount(sessionId: string): Promise<number> {
    return this.#c.read("count the messages", () =>
      Number(
        this.#c.db.prepare("SELECT count(*) AS n FROM messages WHERE session_id = ? AND active = 1")
          .get(sessionId)!.n,
      ));
  }

  /** Ends a session: `true` when this call ended it; the first reason stays. */
  endSession(id: string, reason: string): Promise<boolean> {
    return this.#c.write("end a session", () => {
      this.existing(id);
      return this.#c.db.prepare(
        "UPDATE sessions SET ended_at = ?, end_reason = ? WHERE id = ? AND ended_at IS NULL",
      ).run(Date.now() / 1000, reason, id).changes === 1;
    });
  }

  /** Reopens an ended session, refusing one rotated into a continuation. */
  reopenSession(id: string): Promise<boolean> {
    return this.#c.write("reopen a session", () => {
      const session = this.existing(id);
      const child = this.#continuation(id);
      if (session.end_reason === "compression" && child !== undefined) {
        throw new CompressionSessionClosedError(
          `Cannot reopen session "${id}": a compression rotation continued it as "${child}"`,
        );
      }
      return this.#c.db.prepare(
        "UPDATE sessions SET ended_at = NULL, end_reason = NULL WHERE id = ? AND ended_at IS NOT NULL",
      ).run(id).changes === 1;
    });
  }

  /** The session, created when missing: one insert that keeps an existing row. */
  ensureSession(id: string): Promise<StoredSession> {
    return this.#c.write("ensure a session", () => {
      this.#c.db.prepare("INSERT INTO sessions (id) VALUES (?) ON CONFLICT(id) DO NOTHING").run(id);
      return sessionOf(this.existing(id));
    });
  }

  /** Extends the lock `holder` holds while its lease lasts: one predicated update. */
  refreshCompressionLock(sessionId: string, holder: string, ttlMs: number): Promise<boolean> {
    return this.#c.write("renew the compression lock", () => {
      const now = Date.now();
      return this.#c.db.prepare(
        "UPDATE compression_locks SET expires_at = ? WHERE session_id = ? AND holder = ? AND expires_at > ?",
      ).run(now + ttlMs, sessionId, holder, now).changes === 1;
    });
  }

  /** The continuation a rotation published for `parentId`, or `undefined`. */
  #continuation(parentId: string): string | undefined {
    const row = this.#c.db.prepare("SELECT child_id FROM continuations WHERE parent_id = ?")
      .get(parentId);
    return row ? String(row.child_id) : undefined;
  }

  /** Follows published continuations to the tip (the session itself when not rotated). */
  resolveResumeSessionId(sessionId: string): Promise<string> {
    return this.#c.read("resolve a resume", () => {
      this.existing(sessionId);
      const seen = new Set<string>();
      let current = sessionId;
      for (let next = this.#continuation(current); next !== undefined && !seen.has(next);) {
        seen.add(current);
        current = next;
        next = this.#continuation(current);
      }
      return current;
    });
  }

  /** The published continuation of `parentId` while it is open, or `undefined`. */
  findLiveCompressionChild(parentId: string): Promise<StoredSession | undefined> {
    return this.#c.read("find a continuation", () => {
      const child = this.#continuation(parentId);
      const row = child === undefined ? undefined : this.row(child);
      return row && row.ended_at === null ? sessionOf(row) : undefined;
    });
  }

  /**
   * Reopens a session ended by compression with no continuation, when no live holder
   * keeps its lock (one transaction).
   */
  reopenOrphanedCompressionSession(sessionId: string): Promise<boolean> {
    return this.#c.write("reopen an orphaned rotation", () => {
      const session = this.existing(sessionId);
      if (session.end_reason !== "compression" || this.#continuation(sessionId)) return false;
      const lock = this.#c.db.prepare("SELECT * FROM compression_locks WHERE session_id = ?")
        .get(sessionId);
      if (lock && Number(lock.expires_at) > Date.now()) {
        const pid = holderPid(String(lock.holder));
        if (pid === undefined || processAlive(pid)) return false;
      }
      return this.#c.db.prepare(
        "UPDATE sessions SET ended_at = NULL, end_reason = NULL WHERE id = ? AND end_reason = 'compression'",
      ).run(sessionId).changes === 1;
    });
  }

  /** The sessions whose handoff is requested and unclaimed, each once, oldest first. */
  listPendingHandoffs(): Promise<StoredSession[]> {
    return this.#c.read(
      "list the pending handoffs",
      () =>
        this.#c.db.prepare(
          "SELECT * FROM sessions WHERE handoff_state = 'pending' ORDER BY rowid",
        ).all().map(sessionOf),
    );
  }
}
