// The node:sqlite peer's connection: its schema, its typed errors, and writes in one
// `BEGIN IMMEDIATE` transaction retried (whole) while SQLite says busy, up to a deadline.
import { DatabaseSync } from "node:sqlite";

export { processAlive } from "./_liveness.ts";

/**
 * The base of every error the node:sqlite store throws on purpose.
 *
 * @example
 * ```ts
 * import { NodeSqliteStoreError } from "./_node_sqlite_db.ts";
 * console.log(new NodeSqliteStoreError("x").name); // NodeSqliteStoreError
 * ```
 */
export class NodeSqliteStoreError extends Error {
  /** Creates the error. */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** A write refused after SQLite stayed busy past the store's deadline; it changed nothing. */
export class BusyDeadlineError extends NodeSqliteStoreError {}
/** An append to (or a rotation of) a session a compression rotation already ended. */
export class CompressionSessionClosedError extends NodeSqliteStoreError {}
/** A rewind whose expected active ids are not the session's: it changed nothing. */
export class RewindConflictError extends NodeSqliteStoreError {}
/** A publish by a caller that does not hold the compression lock, or whose lease expired. */
export class CompressionLockError extends NodeSqliteStoreError {}
/** An append to a session that ended (other than by a compression rotation). */
export class SessionEndedError extends NodeSqliteStoreError {}
/** A session that does not exist. */
export class SessionNotFoundError extends NodeSqliteStoreError {}
/** A session that exists already where a new one is made (a fork, a continuation). */
export class SessionExistsError extends NodeSqliteStoreError {}
/** A rewind target or a fork point that is not a message it may be. */
export class InvalidMessageError extends NodeSqliteStoreError {}

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    parent_session_id TEXT REFERENCES sessions(id),
    ended_at REAL,
    end_reason TEXT,
    handoff_state TEXT CHECK (handoff_state IN ('pending', 'running', 'completed', 'failed')),
    handoff_platform TEXT,
    handoff_claimant INTEGER,
    handoff_fence INTEGER NOT NULL DEFAULT 0,
    handoff_error TEXT,
    rewind_count INTEGER NOT NULL DEFAULT 0);
  CREATE TABLE IF NOT EXISTS messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL REFERENCES sessions(id),
    role TEXT NOT NULL,
    content TEXT,
    active INTEGER NOT NULL DEFAULT 1 CHECK (active IN (0, 1)));
  CREATE INDEX IF NOT EXISTS messages_by_session ON messages(session_id, id);
  CREATE TABLE IF NOT EXISTS continuations (
    parent_id TEXT PRIMARY KEY REFERENCES sessions(id),
    child_id TEXT NOT NULL UNIQUE REFERENCES sessions(id));
  CREATE TABLE IF NOT EXISTS compression_locks (
    session_id TEXT PRIMARY KEY,
    holder TEXT NOT NULL,
    expires_at INTEGER NOT NULL);
  CREATE TABLE IF NOT EXISTS obligations (
    id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL,
    message_ref TEXT NOT NULL,
    content TEXT NOT NULL,
    state TEXT NOT NULL
      CHECK (state IN ('pending', 'attempting', 'delivered', 'failed', 'unknown')),
    fence INTEGER NOT NULL CHECK (fence >= 0),
    owner_pid INTEGER NOT NULL,
    last_error TEXT);`;

/** SQLite's primary result codes for a database another connection holds. */
const SQLITE_BUSY = 5;
const SQLITE_LOCKED = 6;

/**
 * Whether node:sqlite's error is SQLite's busy (or locked) result. Node's errors carry the
 * result code (`errcode`); Deno's (2.9) carry only `code: "ERR_SQLITE_ERROR"` and SQLite's
 * message for the code (`sqlite3_errstr`), so that message is what tells them apart there.
 */
function isBusy(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { errcode?: unknown }).errcode;
  if (typeof code === "number") {
    return (code & 0xff) === SQLITE_BUSY || (code & 0xff) === SQLITE_LOCKED;
  }
  return (error as { code?: unknown }).code === "ERR_SQLITE_ERROR" &&
    /^database (table )?is locked/.test(error.message);
}

/** How long a write keeps trying while SQLite says busy, in all. */
const BUSY_DEADLINE_MS = 30_000;
/** SQLite's own wait per attempt (its busy handler). */
const BUSY_TIMEOUT_MS = 1000;

/** The connection: the schema made, writes and reads retried while busy. */
export class Connection {
  readonly db: DatabaseSync;

  private constructor(db: DatabaseSync) {
    this.db = db;
  }

  /**
   * Opens the file with a journal mode and a `synchronous` level, and makes the schema,
   * retried while another process holds the file (the journal mode and the schema need
   * its locks).
   *
   * @param path The database file.
   * @param journalMode `wal` or `delete`.
   * @param synchronous `off`, `normal`, `full` or `extra`.
   * @returns The connection.
   */
  static async open(path: string, journalMode: string, synchronous: string): Promise<Connection> {
    const connection = new Connection(new DatabaseSync(path));
    const { db } = connection;
    try {
      db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
      await connection.read(
        "set the journal mode",
        () => db.exec(`PRAGMA journal_mode = ${journalMode}`),
      );
      db.exec(`PRAGMA synchronous = ${synchronous}`);
      await connection.read("make the schema", () => db.exec(SCHEMA));
      return connection;
    } catch (error) {
      db.close();
      throw error;
    }
  }

  /**
   * Runs `fn` in one `BEGIN IMMEDIATE` transaction and commits; returns only once COMMIT
   * returned. While SQLite says busy the whole transaction is rolled back and retried,
   * with a jittered pause, up to the deadline; then {@linkcode BusyDeadlineError}.
   */
  async write<T>(what: string, fn: () => T): Promise<T> {
    return await this.#retried(what, () => {
      this.db.exec("BEGIN IMMEDIATE");
      try {
        const result = fn();
        this.db.exec("COMMIT");
        return result;
      } catch (error) {
        if (this.db.isTransaction) this.db.exec("ROLLBACK");
        throw error;
      }
    });
  }

  /** Runs a statement outside a transaction, retried while SQLite says busy. */
  async read<T>(what: string, fn: () => T): Promise<T> {
    return await this.#retried(what, fn);
  }

  async #retried<T>(what: string, attempt: () => T): Promise<T> {
    const started = performance.now();
    for (let tries = 1;; tries++) {
      try {
        return attempt();
      } catch (error) {
        if (!isBusy(error)) throw error;
        const waited = performance.now() - started;
        if (waited >= BUSY_DEADLINE_MS) {
          throw new BusyDeadlineError(
            `Cannot ${what}: the database stayed busy for ${
              Math.round(waited)
            } ms (${tries} tries)`,
            { cause: error },
          );
        }
        const pause = waited < 2000 ? 20 + Math.random() * 130 : 250 + Math.random() * 750;
        await new Promise((resolve) => setTimeout(resolve, pause));
      }
    }
  }

  /** Closes the connection. */
  close(): void {
    this.db.close();
  }
}

/** The pid a lock holder names (`...pid=<pid>`), or `undefined`. */
export function holderPid(holder: string): number | undefined {
  const match = /pid=(\d+)/.exec(holder);
  return match ? Number(match[1]) : undefined;
}
