/**
 * A target nobody here wrote the storage of: a session store on Deno's built-in
 * `node:sqlite` (the SQLite bundled in Deno), for the file-system call recorder's tiers.
 *
 * Its durability policy is an option: the journal mode is the leg's
 * (`options.journalMode`), else `NODE_SQLITE_JOURNAL_MODE`, else `wal`; `synchronous` is
 * `NODE_SQLITE_SYNCHRONOUS` (`off`, `normal`, `full`, `extra`; default `full`). WAL with
 * `normal` is SQLite's documented power-loss hole (acknowledged commits can roll back).
 *
 * It offers the core methods plus what SQL makes natural: sessions read back, the
 * handoff claim as one predicated `UPDATE`, and `PRAGMA integrity_check` as its
 * invariant check.
 *
 * @example
 * ```ts
 * import { openStore } from "./node_sqlite.ts";
 * const store = openStore(`${Deno.makeTempDirSync()}/s.db`, { journalMode: "wal" });
 * store.createSession("s1");
 * console.log(store.appendMessage("s1", { role: "user", content: "hi" })); // 1
 * store.close();
 * ```
 *
 * @module
 */
import { DatabaseSync, type StatementSync } from "node:sqlite";
import type { CellMessage, StoredMessage, StoredSession, StoreOptions } from "../cells/target.ts";

/** A `PRAGMA synchronous` level. */
export type Synchronous = "off" | "normal" | "full" | "extra";

const SYNCHRONOUS: readonly Synchronous[] = ["off", "normal", "full", "extra"];

/**
 * Raised for a bad durability option.
 *
 * @example
 * ```ts
 * import { NodeSqliteOptionError } from "./node_sqlite.ts";
 * console.log(new NodeSqliteOptionError("x").name); // NodeSqliteOptionError
 * ```
 */
export class NodeSqliteOptionError extends Error {
  /** Creates the error. */
  constructor(message: string) {
    super(message);
    this.name = "NodeSqliteOptionError";
  }
}

/** An environment variable; unset when the process may not read it (a cell's scoped child). */
function envValue(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined;
  }
}

/**
 * The durability policy the store will use, from the options and the environment.
 *
 * @param options The leg's journal mode.
 * @returns The journal mode and `synchronous` level.
 * @throws {NodeSqliteOptionError} When an environment value is not one of the levels.
 * @example
 * ```ts
 * import { durabilityPolicy } from "./node_sqlite.ts";
 * console.log(durabilityPolicy({ journalMode: "delete" }).journalMode); // delete
 * ```
 */
export function durabilityPolicy(
  options: StoreOptions,
): { journalMode: "wal" | "delete"; synchronous: Synchronous } {
  const rawMode = envValue("NODE_SQLITE_JOURNAL_MODE")?.toLowerCase();
  if (rawMode !== undefined && rawMode !== "wal" && rawMode !== "delete") {
    throw new NodeSqliteOptionError(
      `Invalid NODE_SQLITE_JOURNAL_MODE "${rawMode}": expected wal or delete`,
    );
  }
  const rawSync = (envValue("NODE_SQLITE_SYNCHRONOUS") ?? "full").toLowerCase();
  if (!SYNCHRONOUS.includes(rawSync as Synchronous)) {
    throw new NodeSqliteOptionError(
      `Invalid NODE_SQLITE_SYNCHRONOUS "${rawSync}": expected one of ${SYNCHRONOUS.join(", ")}`,
    );
  }
  return {
    journalMode: options.journalMode ?? rawMode ?? "wal",
    synchronous: rawSync as Synchronous,
  };
}

/**
 * The store on `node:sqlite`.
 *
 * @example
 * ```ts
 * import { NodeSqliteStore } from "./node_sqlite.ts";
 * const store = new NodeSqliteStore(`${Deno.makeTempDirSync()}/s.db`, {});
 * console.log(store.checkInvariants()); // []
 * store.close();
 * ```
 */
export class NodeSqliteStore {
  #db: DatabaseSync;
  #insertSession: StatementSync;
  #insertMessage: StatementSync;
  #selectMessages: StatementSync;
  #selectSession: StatementSync;

  /**
   * Opens (creating) the store.
   *
   * @param path The database file.
   * @param options The leg's journal mode.
   */
  constructor(path: string, options: StoreOptions) {
    const policy = durabilityPolicy(options);
    this.#db = new DatabaseSync(path);
    this.#db.exec("PRAGMA busy_timeout = 5000");
    this.#db.exec(`PRAGMA journal_mode = ${policy.journalMode}`);
    this.#db.exec(`PRAGMA synchronous = ${policy.synchronous}`);
    this.#db.exec(`
      CREATE TABLE IF NOT EXISTS sessions (
        id TEXT PRIMARY KEY, parent_session_id TEXT, ended_at REAL, end_reason TEXT,
        handoff_state TEXT);
      CREATE TABLE IF NOT EXISTS messages (
        id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL REFERENCES sessions(id),
        role TEXT NOT NULL, content TEXT);
      CREATE INDEX IF NOT EXISTS messages_by_session ON messages(session_id, id);`);
    this.#insertSession = this.#db.prepare(
      "INSERT INTO sessions (id) VALUES (?) ON CONFLICT(id) DO NOTHING",
    );
    this.#insertMessage = this.#db.prepare(
      "INSERT INTO messages (session_id, role, content) VALUES (?, ?, ?)",
    );
    this.#selectMessages = this.#db.prepare(
      "SELECT id, role, content FROM messages WHERE session_id = ? ORDER BY id",
    );
    this.#selectSession = this.#db.prepare(
      "SELECT id, parent_session_id, ended_at, end_reason, handoff_state FROM sessions WHERE id = ?",
    );
  }

  #write<T>(fn: () => T): T {
    this.#db.exec("BEGIN IMMEDIATE");
    try {
      const result = fn();
      this.#db.exec("COMMIT");
      return result;
    } catch (error) {
      if (this.#db.isTransaction) this.#db.exec("ROLLBACK");
      throw error;
    }
  }

  /** Creates a session, keeping an existing one. */
  createSession(id: string): void {
    this.#write(() => this.#insertSession.run(id));
  }

  /** Appends a message; returns its id once committed. */
  appendMessage(sessionId: string, message: CellMessage): number {
    return this.#write(() => {
      if (!this.#selectSession.get(sessionId)) {
        throw new Error(`Cannot append to session "${sessionId}": not found`);
      }
      return Number(
        this.#insertMessage.run(sessionId, message.role, message.content).lastInsertRowid,
      );
    });
  }

  /** The messages of a session in id order. */
  getMessages(sessionId: string): StoredMessage[] {
    return this.#selectMessages.all(sessionId).map((row) => ({
      id: Number(row.id),
      role: String(row.role),
      content: row.content === null ? null : String(row.content),
    }));
  }

  /** Reads a session. */
  getSession(id: string): StoredSession | undefined {
    const row = this.#selectSession.get(id);
    if (!row) return undefined;
    return {
      id: String(row.id),
      parentSessionId: row.parent_session_id === null ? null : String(row.parent_session_id),
      endedAt: row.ended_at === null ? null : Number(row.ended_at),
      endReason: row.end_reason === null ? null : String(row.end_reason),
      handoffState: row.handoff_state === null ? null : String(row.handoff_state),
    };
  }

  /** Every session. */
  listSessions(): StoredSession[] {
    const ids = this.#db.prepare("SELECT id FROM sessions ORDER BY id").all();
    return ids.map((row) => this.getSession(String(row.id))!);
  }

  /** Parks a session for handoff; `false` when one is pending or running. */
  requestHandoff(sessionId: string): boolean {
    return this.#write(() =>
      this.#db.prepare(
        "UPDATE sessions SET handoff_state = 'pending' WHERE id = ? AND (handoff_state IS NULL OR handoff_state NOT IN ('pending', 'running'))",
      ).run(sessionId).changes === 1
    );
  }

  /** Claims a pending handoff: one predicated update, so exactly one racer wins. */
  claimHandoff(sessionId: string): boolean {
    return this.#write(() =>
      this.#db.prepare(
        "UPDATE sessions SET handoff_state = 'running' WHERE id = ? AND handoff_state = 'pending'",
      ).run(sessionId).changes === 1
    );
  }

  /** The handoff state, or `null`. */
  getHandoffState(sessionId: string): string | null {
    return this.getSession(sessionId)?.handoffState ?? null;
  }

  /** `PRAGMA integrity_check` and foreign keys: one line per violation. */
  checkInvariants(): string[] {
    const problems: string[] = [];
    for (const row of this.#db.prepare("PRAGMA integrity_check").all()) {
      const line = String(Object.values(row)[0]);
      if (line !== "ok") problems.push(`integrity_check: ${line}`);
    }
    for (const row of this.#db.prepare("PRAGMA foreign_key_check").all()) {
      problems.push(`foreign_key_check: ${JSON.stringify(row)}`);
    }
    return problems;
  }

  /** Closes the store. */
  close(): void {
    this.#db.close();
  }
}

/**
 * Opens the store (the target contract's entry point).
 *
 * @param path The database file.
 * @param options The leg's journal mode.
 * @returns The store.
 * @example
 * ```ts
 * import { openStore } from "./node_sqlite.ts";
 * const store = openStore(`${Deno.makeTempDirSync()}/s.db`, {});
 * store.close();
 * ```
 */
export function openStore(path: string, options: StoreOptions): NodeSqliteStore {
  return new NodeSqliteStore(path, options);
}
