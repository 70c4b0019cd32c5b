// The open database behind a SessionDB: its prepared statements, write transactions with
// the bounded busy retry, storage failures named with their fix, and the row lookups the
// operations of every feature share.
import type { Database } from "./sqlite/database.ts";
import type { Statement } from "./sqlite/statement.ts";
import { SqliteError } from "./sqlite/sqlite_error.ts";
import {
  SQLITE_BUSY,
  SQLITE_CANTOPEN,
  SQLITE_CORRUPT,
  SQLITE_FULL,
  SQLITE_IOERR,
  SQLITE_LOCKED,
  SQLITE_NOTADB,
  SQLITE_READONLY,
} from "./sqlite/constants.ts";
import type { JournalMode } from "./journal_mode.ts";
import {
  BusyDeadlineError,
  CompressionSessionClosedError,
  SessionDBClosedError,
  SessionDBCorruptError,
  SessionDBError,
  SessionDBStorageError,
  SessionEndedError,
  SessionNotFoundError,
} from "./errors.ts";
import { type SessionRow, toSession } from "./_rows.ts";
import { APPEND_SQL } from "./statements.ts";
import type { NewMessage, Session } from "./types.ts";

/** Result codes of the file, not the caller: read-only, I/O, corrupt, full, can't open, not a database. */
const STORAGE_CODES = new Set([
  SQLITE_READONLY,
  SQLITE_IOERR,
  SQLITE_CORRUPT,
  SQLITE_FULL,
  SQLITE_CANTOPEN,
  SQLITE_NOTADB,
]);
const sleepCell = new Int32Array(new SharedArrayBuffer(4));

function sleepSync(ms: number): void {
  Atomics.wait(sleepCell, 0, 0, ms);
}

/** Whether `error` is SQLite's busy or locked result. */
export function isBusy(error: unknown): boolean {
  return error instanceof SqliteError &&
    (error.code === SQLITE_BUSY || error.code === SQLITE_LOCKED);
}

/**
 * Runs `fn`, retrying SQLite's busy result after a jittered sleep until `deadlineMs` has
 * passed; then throws the error (a {@linkcode BusyDeadlineError} as a rule) that `expired`
 * builds from the time waited and the attempts made. Any other error goes through at once.
 */
export function untilNotBusy<T>(
  fn: () => T,
  deadlineMs: number,
  expired: (waitedMs: number, attempts: number, cause: unknown) => Error,
): T {
  const started = performance.now();
  for (let attempt = 1;; attempt++) {
    try {
      return fn();
    } catch (error) {
      if (!isBusy(error)) throw error;
      const waited = performance.now() - started;
      if (waited >= deadlineMs) throw expired(Math.round(waited), attempt, error);
      const jitter = waited < 2000 ? 20 + Math.random() * 130 : 250 + Math.random() * 750;
      sleepSync(Math.min(jitter, Math.max(1, deadlineMs - waited)));
    }
  }
}

/** Now, in seconds since the epoch (the store's timestamps). */
export function now(): number {
  return Date.now() / 1000;
}

/** Runs a one-off query and finalizes its statement. */
export function oneOff<T>(db: Database, sql: string, read: (statement: Statement) => T): T {
  using statement = db.prepare(sql);
  return read(statement);
}

/** What went wrong, with the fix for the storage failures a user can mend. */
export function errorDetail(error: unknown): string {
  if (error instanceof SqliteError) {
    const base = error.message.replace(/^Cannot open database "[^"]*": /, "");
    if (error.code === SQLITE_NOTADB) {
      return `${base} (restore it from a backup or choose another path)`;
    }
    if (error.code === SQLITE_CORRUPT) {
      return `${base} (the file is corrupt: restore it from a backup)`;
    }
    if (error.code === SQLITE_CANTOPEN) {
      return `${base} (check that the folder exists and is writable, and the file readable)`;
    }
    if (error.code === SQLITE_READONLY) {
      return `${base} (the file or its folder is read-only: make both writable, or open with { readonly: true })`;
    }
    if (error.code === SQLITE_IOERR) {
      return `${base} (an I/O error: check the disk and the file system)`;
    }
    if (error.code === SQLITE_FULL) return `${base} (the disk is full: free some space and retry)`;
    return base;
  }
  return error instanceof Error ? error.message : String(error);
}

/** How a connection was opened. */
export interface ConnectionOptions {
  /** The journal mode in effect. */
  journalMode: JournalMode;
  /** Why the journal mode is what it is. */
  journalModeReason: string;
  /** How long a write retries a busy lock. */
  busyDeadlineMs: number;
  /** How long an append retries a busy lock. */
  appendDeadlineMs: number;
  /** Whether writes are refused. */
  readonly: boolean;
}

/** An open session database; every operation of SessionDB runs through one. */
export class Connection {
  #db: Database | undefined;
  #path: string;
  #options: ConnectionOptions;
  #statements = new Map<string, Statement>();
  /** What showed the file corrupt, once something did: every later write is refused. */
  #corrupt: string | undefined;

  /** Wraps an open database (configured and migrated by `_open.ts`). */
  constructor(db: Database, path: string, options: ConnectionOptions) {
    this.#db = db;
    this.#path = path;
    this.#options = options;
  }

  /** The database file. */
  get path(): string {
    return this.#path;
  }

  /** The journal mode in effect. */
  get journalMode(): JournalMode {
    return this.#options.journalMode;
  }

  /** Why the journal mode is what it is. */
  get journalModeReason(): string {
    return this.#options.journalModeReason;
  }

  /** How long an append retries a busy lock. */
  get appendDeadlineMs(): number {
    return this.#options.appendDeadlineMs;
  }

  /** Whether the connection is open. */
  get isOpen(): boolean {
    return this.#db !== undefined;
  }

  /** The open database; throws {@linkcode SessionDBClosedError} once closed. */
  database(): Database {
    if (!this.#db) {
      throw new SessionDBClosedError(
        `Cannot use session database "${this.#path}": it was closed (open it again)`,
      );
    }
    return this.#db;
  }

  /** The prepared statement for `sql`, prepared once per connection. */
  stmt(sql: string): Statement {
    let statement = this.#statements.get(sql);
    if (!statement) {
      statement = this.database().prepare(sql);
      this.#statements.set(sql, statement);
    }
    return statement;
  }

  /** Runs `fn` in one BEGIN IMMEDIATE transaction, retrying a busy lock until the deadline. */
  write<T>(operation: string, fn: () => T, deadlineMs = this.#options.busyDeadlineMs): T {
    const db = this.database();
    if (this.#options.readonly) {
      throw new SessionDBError(
        `Cannot ${operation} on session database "${this.#path}": it was opened read-only`,
      );
    }
    if (this.#corrupt !== undefined) {
      throw new SessionDBCorruptError(
        `Cannot ${operation} on session database "${this.#path}": an earlier operation found the file corrupt (${this.#corrupt}); nothing was written: restore it from a backup`,
      );
    }
    try {
      return untilNotBusy(
        () => {
          this.stmt(APPEND_SQL.begin).run();
          try {
            const result = fn();
            this.stmt(APPEND_SQL.commit).run();
            return result;
          } catch (error) {
            if (db.inTransaction) this.stmt("ROLLBACK").run();
            throw error;
          }
        },
        deadlineMs,
        (waited, attempts, cause) =>
          new BusyDeadlineError(
            `Cannot ${operation} on session database "${this.#path}": the database stayed locked for ${waited} ms (${attempts} attempts, deadline ${deadlineMs} ms): another connection holds the write lock (retry later, find the process that keeps a transaction open, or raise busyDeadlineMs)`,
            { cause },
          ),
      );
    } catch (error) {
      throw this.#storageError(operation, error);
    }
  }

  /** Names a storage failure (read-only, full, corrupt, I/O) with its fix; else `error`. */
  #storageError(operation: string, error: unknown, wrote = true): unknown {
    if (!(error instanceof SqliteError) || !STORAGE_CODES.has(error.code)) return error;
    const malformed = error.code === SQLITE_CORRUPT || error.code === SQLITE_NOTADB;
    if (malformed && this.#checksSound()) {
      // SQLite names a failed read of a sound file "malformed" too: not the file's fault.
      return new SessionDBStorageError(
        `Cannot ${operation} on session database "${this.#path}": ${error.message}, but the file checks out (quick_check): a read failed (an I/O error: check the disk, then retry)${
          wrote ? "; the transaction was rolled back" : ""
        }`,
        { cause: error },
      );
    }
    if (malformed) this.#corrupt ??= `${operation}: ${error.message}`;
    return new (malformed ? SessionDBCorruptError : SessionDBStorageError)(
      `Cannot ${operation} on session database "${this.#path}": ${errorDetail(error)}${
        wrote ? "; the transaction was rolled back" : ""
      }`,
      { cause: error },
    );
  }

  /** Whether SQLite's own check finds the file sound now (a check that fails says no). */
  #checksSound(): boolean {
    try {
      return oneOff(this.database(), "PRAGMA quick_check", (q) => q.value<[string]>()?.[0]) ===
        "ok";
    } catch {
      return false;
    }
  }

  /** Runs a read, naming a storage failure (corrupt page, I/O error) with its fix. */
  read<T>(operation: string, fn: () => T): T {
    // In a rollback journal a writer's commit locks readers out; a busy read waits too.
    const deadlineMs = this.#options.busyDeadlineMs;
    try {
      return untilNotBusy(fn, deadlineMs, (waited, attempts, cause) =>
        new BusyDeadlineError(
          `Cannot ${operation} on session database "${this.#path}": the database stayed locked for ${waited} ms (${attempts} attempts, deadline ${deadlineMs} ms): another connection kept it locked (retry later, or raise busyDeadlineMs)`,
          { cause },
        ));
    } catch (error) {
      throw this.#storageError(operation, error, false);
    }
  }

  /** Closes the connection (a passive checkpoint first in WAL mode). Idempotent. */
  close(): void {
    const db = this.#db;
    if (!db) return;
    this.#db = undefined;
    this.#statements.clear();
    try {
      if (this.#options.journalMode === "wal" && !this.#options.readonly) {
        db.exec("PRAGMA wal_checkpoint(PASSIVE)");
      }
    } catch {
      // A busy checkpoint is harmless: the next connection checkpoints.
    } finally {
      db.close();
    }
  }

  // --- lookups shared by the operations ---------------------------------------------

  /** Reads a session, or `undefined`. */
  session(id: string): Session | undefined {
    const row = this.read(
      "read a session",
      () => this.stmt(APPEND_SQL.selectSession).get<SessionRow>(id),
    );
    return row ? toSession(row) : undefined;
  }

  /** The session's row; throws {@linkcode SessionNotFoundError} when there is none. */
  requireSession(id: string): SessionRow {
    const row = this.stmt(APPEND_SQL.selectSession).get<SessionRow>(id);
    if (!row) {
      throw new SessionNotFoundError(
        `Unknown session "${id}": create it first with createSession`,
      );
    }
    return row;
  }

  /** requireWritable for the append hot path (reads one column), also refusing an ended session. */
  requireAppendable(id: string): void {
    const row = this.stmt(APPEND_SQL.selectAppendable).value<[string | null]>(id);
    if (!row) this.requireSession(id); // throws SessionNotFoundError
    else if (row[0] === "compression") this.requireWritable(id, "append to"); // throws
    else if (row[0] !== null) {
      throw new SessionEndedError(
        `Cannot append to session "${id}": it ended (${row[0]}); reopenSession("${id}") first`,
      );
    }
  }

  /** The session's row; throws when it was rotated by compression (write to its continuation). */
  requireWritable(id: string, action: string): SessionRow {
    const row = this.requireSession(id);
    if (row.end_reason === "compression") {
      const next = this.continuationOf(id);
      throw new CompressionSessionClosedError(
        `Cannot ${action} session "${id}": it was rotated by compression${
          next ? ` into "${next}"` : ""
        } (write to resolveResumeSessionId("${id}") instead)`,
      );
    }
    return row;
  }

  /** The newest continuation of a rotated session, or `undefined`. */
  continuationOf(id: string): string | undefined {
    const row = this.stmt(
      `SELECT id FROM sessions WHERE parent_session_id = ? AND branch_kind = 'continuation'
       ORDER BY started_at DESC, id DESC LIMIT 1`,
    ).value<[string]>(id);
    return row?.[0];
  }

  /** Inserts one message row (the caller updates the count); returns its row id. */
  insertMessage(sessionId: string, message: NewMessage): number {
    this.stmt(APPEND_SQL.insertMessage).run(
      sessionId,
      message.role,
      message.content,
      message.toolCallId ?? null,
      message.toolCalls ?? null,
      message.toolName ?? null,
      now(),
    );
    return Number(this.database().lastInsertRowId);
  }
}
