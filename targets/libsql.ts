/**
 * A target nobody here wrote the storage of: a session store on libSQL through npm
 * `@libsql/client`, on a local file (`file:` URL). The core takes no dependency on it:
 * only this peer imports the package, and only when a store is opened.
 *
 * The package loads a native Node-API addon: it reads `LIBSQL_JS_DEV`, asks three sys
 * APIs (`process.report` detects the C library), loads the addon from Deno's npm cache
 * and reads that cache. The cells' children get none of that by default, so this module
 * declares it ({@linkcode childPermissions}) and the cells grant exactly that, naming it
 * in their reports. A package that cannot be installed throws `PeerUnavailableError`,
 * and every tier SKIPs.
 *
 * The journal mode is the leg's (`PRAGMA journal_mode`), else libSQL's default.
 *
 * @example
 * ```ts ignore
 * import { openStore } from "./libsql.ts";
 * const store = await openStore(`${Deno.makeTempDirSync()}/s.db`, { journalMode: "wal" });
 * await store.createSession("s1");
 * console.log(await store.appendMessage("s1", { role: "user", content: "hi" })); // 1
 * store.close();
 * ```
 *
 * @module
 */
import type {
  CellMessage,
  ChildPermissions,
  PermissionContext,
  StoredMessage,
  StoredSession,
  StoreOptions,
} from "../cells/contract/target.ts";

/** The package, pinned to the major version checked here. */
const PACKAGE = "npm:@libsql/client@0.18";

/**
 * What the package needs in the cells' children beyond their narrow scope, measured with
 * Deno 2.9.6 and `@libsql/client` 0.18 (libSQL 0.5.29): the variable `LIBSQL_JS_DEV`;
 * the sys APIs `cpus`, `hostname` and `networkInterfaces` (from `process.report`); FFI
 * to the `@libsql` packages of the npm cache (the addon `index.node` of the platform's
 * package); read access to the npm cache. No network, no subprocess.
 *
 * @param context Where Deno's npm cache is on this run.
 * @returns The permissions.
 * @example
 * ```ts
 * import { childPermissions } from "./libsql.ts";
 * const wanted = childPermissions({ denoDir: "/cache/deno", npmCache: "/cache/deno/npm" });
 * console.log(wanted.sys); // ["cpus", "hostname", "networkInterfaces"]
 * ```
 */
export function childPermissions({ npmCache }: PermissionContext): ChildPermissions {
  return {
    env: ["LIBSQL_JS_DEV"],
    sys: ["cpus", "hostname", "networkInterfaces"],
    ffi: [`${npmCache}/registry.npmjs.org/@libsql`],
    read: [npmCache],
  };
}

/** The slice of `@libsql/client` this store uses. */
interface Row {
  [column: string]: unknown;
}
interface ResultSet {
  rows: Row[];
  rowsAffected: number;
  lastInsertRowid: bigint | undefined;
}
interface Statement {
  sql: string;
  args: (string | number | null)[];
}
interface Transaction {
  execute(statement: Statement | string): Promise<ResultSet>;
  commit(): Promise<void>;
  rollback(): Promise<void>;
  close(): void;
}
interface Client {
  execute(statement: Statement | string): Promise<ResultSet>;
  transaction(mode: "write" | "read"): Promise<Transaction>;
  close(): void;
}

/**
 * Raised when `@libsql/client` cannot be loaded (not installed, offline, no npm).
 *
 * @example
 * ```ts
 * import { PeerUnavailableError } from "./libsql.ts";
 * console.log(new PeerUnavailableError("x").name); // PeerUnavailableError
 * ```
 */
export class PeerUnavailableError extends Error {
  /** Creates the error. */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "PeerUnavailableError";
  }
}

const BUSY_TIMEOUT_MS = 5000;

/**
 * Sets the journal mode, waiting while another connection holds the file: SQLite answers
 * a mode switch's busy at once (it upgrades a read transaction, where waiting could
 * deadlock), never through `busy_timeout`, so two processes opening a new file together
 * would otherwise fail one of them.
 */
async function setJournalMode(client: Client, mode: string): Promise<void> {
  const deadline = Date.now() + BUSY_TIMEOUT_MS;
  for (let pauseMs = 5;; pauseMs = Math.min(pauseMs * 2, 200)) {
    try {
      await client.execute(`PRAGMA journal_mode = ${mode}`);
      return;
    } catch (error) {
      const busy = (error as { code?: unknown }).code === "SQLITE_BUSY";
      if (!busy || Date.now() >= deadline) throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, pauseMs));
  }
}

const text = (value: unknown) => value === null || value === undefined ? null : String(value);

/**
 * The store on libSQL.
 *
 * @example
 * ```ts ignore
 * import { openStore } from "./libsql.ts";
 * const store = await openStore(`${Deno.makeTempDirSync()}/s.db`, {});
 * console.log(await store.getMessages("none")); // []
 * store.close();
 * ```
 */
export class LibsqlStore {
  #client: Client;

  /**
   * Wraps an open client.
   *
   * @param client The client.
   */
  constructor(client: Client) {
    this.#client = client;
  }

  async #write<T>(fn: (tx: Transaction) => Promise<T>): Promise<T> {
    const tx = await this.#client.transaction("write");
    try {
      const result = await fn(tx);
      await tx.commit();
      return result;
    } catch (error) {
      await tx.rollback().catch(() => {});
      throw error;
    } finally {
      tx.close();
    }
  }

  /** Creates a session, keeping an existing one. */
  async createSession(id: string): Promise<void> {
    await this.#write((tx) =>
      tx.execute({
        sql: "INSERT INTO sessions (id) VALUES (?) ON CONFLICT(id) DO NOTHING",
        args: [id],
      })
    );
  }

  /** Appends a message in one write transaction; returns its id once committed. */
  appendMessage(sessionId: string, message: CellMessage): Promise<number> {
    return this.#write(async (tx) => {
      const found = await tx.execute({
        sql: "SELECT 1 FROM sessions WHERE id = ?",
        args: [sessionId],
      });
      if (!found.rows.length) throw new Error(`Cannot append to session "${sessionId}": not found`);
      const inserted = await tx.execute({
        sql: "INSERT INTO messages (session_id, role, content) VALUES (?, ?, ?)",
        args: [sessionId, message.role, message.content],
      });
      return Number(inserted.lastInsertRowid);
    });
  }

  /** The messages of a session in id order. */
  async getMessages(sessionId: string): Promise<StoredMessage[]> {
    const result = await this.#client.execute({
      sql: "SELECT id, role, content FROM messages WHERE session_id = ? ORDER BY id",
      args: [sessionId],
    });
    return result.rows.map((row) => ({
      id: Number(row.id),
      role: String(row.role),
      content: text(row.content),
    }));
  }

  /** Reads a session. */
  async getSession(id: string): Promise<StoredSession | undefined> {
    const result = await this.#client.execute({
      sql:
        "SELECT id, parent_session_id, ended_at, end_reason, handoff_state FROM sessions WHERE id = ?",
      args: [id],
    });
    const row = result.rows[0];
    if (!row) return undefined;
    return {
      id: String(row.id),
      parentSessionId: text(row.parent_session_id),
      endedAt: row.ended_at === null ? null : Number(row.ended_at),
      endReason: text(row.end_reason),
      handoffState: text(row.handoff_state),
    };
  }

  /** Every session. */
  async listSessions(): Promise<StoredSession[]> {
    const ids = await this.#client.execute("SELECT id FROM sessions ORDER BY id");
    const out: StoredSession[] = [];
    for (const row of ids.rows) {
      const session = await this.getSession(String(row.id));
      if (session) out.push(session);
    }
    return out;
  }

  /** Parks a session for handoff; `false` when one is pending or running. */
  requestHandoff(sessionId: string): Promise<boolean> {
    return this.#write(async (tx) =>
      (await tx.execute({
        sql:
          "UPDATE sessions SET handoff_state = 'pending' WHERE id = ? AND (handoff_state IS NULL OR handoff_state NOT IN ('pending', 'running'))",
        args: [sessionId],
      })).rowsAffected === 1
    );
  }

  /** Claims a pending handoff: one predicated update, so exactly one racer wins. */
  claimHandoff(sessionId: string): Promise<boolean> {
    return this.#write(async (tx) =>
      (await tx.execute({
        sql:
          "UPDATE sessions SET handoff_state = 'running' WHERE id = ? AND handoff_state = 'pending'",
        args: [sessionId],
      })).rowsAffected === 1
    );
  }

  /** The handoff state, or `null`. */
  async getHandoffState(sessionId: string): Promise<string | null> {
    return (await this.getSession(sessionId))?.handoffState ?? null;
  }

  /** `PRAGMA integrity_check` and foreign keys: one line per violation. */
  async checkInvariants(): Promise<string[]> {
    const problems: string[] = [];
    for (const row of (await this.#client.execute("PRAGMA integrity_check")).rows) {
      const line = String(Object.values(row)[0]);
      if (line !== "ok") problems.push(`integrity_check: ${line}`);
    }
    for (const row of (await this.#client.execute("PRAGMA foreign_key_check")).rows) {
      problems.push(`foreign_key_check: ${JSON.stringify(row)}`);
    }
    return problems;
  }

  /** Closes the client. */
  close(): void {
    this.#client.close();
  }
}

/**
 * Opens the store (the target contract's entry point).
 *
 * @param path The database file.
 * @param options The leg's journal mode.
 * @returns The store.
 * @throws {PeerUnavailableError} When `@libsql/client` cannot be loaded.
 * @example
 * ```ts ignore
 * import { openStore } from "./libsql.ts";
 * const store = await openStore(`${Deno.makeTempDirSync()}/s.db`, {});
 * store.close();
 * ```
 */
export async function openStore(path: string, options: StoreOptions): Promise<LibsqlStore> {
  let createClient: (config: { url: string }) => Client;
  try {
    ({ createClient } = await import(PACKAGE));
  } catch (error) {
    const message = error instanceof Error ? error.message.split("\n")[0] : String(error);
    throw new PeerUnavailableError(`Cannot load ${PACKAGE}: ${message}`, { cause: error });
  }
  const client = createClient({ url: `file:${path}` });
  await client.execute(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
  if (options.journalMode) await setJournalMode(client, options.journalMode);
  await client.execute(`CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY, parent_session_id TEXT, ended_at REAL, end_reason TEXT,
    handoff_state TEXT)`);
  await client.execute(`CREATE TABLE IF NOT EXISTS messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL REFERENCES sessions(id),
    role TEXT NOT NULL, content TEXT)`);
  return new LibsqlStore(client);
}
