import { fromFileUrl } from "../../internal/path.ts";
import { EMPTY, loadLibrary, readCString, type SqliteSymbols, toNumber } from "./_ffi.ts";
import {
  SQLITE_MISUSE,
  SQLITE_OK,
  SQLITE_OPEN_CREATE,
  SQLITE_OPEN_MEMORY,
  SQLITE_OPEN_NOMUTEX,
  SQLITE_OPEN_READONLY,
  SQLITE_OPEN_READWRITE,
  SQLITE_OPEN_URI,
} from "./constants.ts";
import { SqliteError } from "./sqlite_error.ts";
import { Statement, type StatementParameters } from "./statement.ts";

/**
 * Options of {@linkcode Database}.
 *
 * @example
 * ```ts
 * import { Database, type DatabaseOptions } from "./database.ts";
 * const path = `${Deno.makeTempDirSync()}/audit.db`;
 * new Database(path).close(); // created by the writer
 * const options: DatabaseOptions = { readonly: true }; // an audit never writes
 * const db = new Database(path, options);
 * db.close();
 * ```
 */
export interface DatabaseOptions {
  /** Open read-only (default `false`). */
  readonly?: boolean;
  /** Create the file when it is missing (default `true`; ignored when read-only). */
  create?: boolean;
  /** Open a private in-memory database; the path is ignored (default `false`). */
  memory?: boolean;
  /** The name of a registered VFS to open through (default: SQLite's default VFS). */
  vfs?: string;
}

const encoder = new TextEncoder();

/**
 * The version of the loaded SQLite library, e.g. `"3.53.2"`.
 *
 * @returns The result of `sqlite3_libversion()`.
 * @example
 * ```ts
 * import { sqliteVersion } from "./database.ts";
 * console.log(sqliteVersion());
 * ```
 */
export function sqliteVersion(): string {
  const { symbols } = loadLibrary();
  return readCString(symbols, symbols.sqlite3_libversion());
}

/**
 * The path of the SQLite library this process loaded (`DENO_SQLITE_PATH`, else the
 * system library).
 *
 * @returns The path given to `dlopen`.
 * @example
 * ```ts
 * import { sqliteLibraryPath } from "./database.ts";
 * console.log(sqliteLibraryPath());
 * ```
 */
export function sqliteLibraryPath(): string {
  return loadLibrary().path;
}

/**
 * A function run in a transaction, with forms for each `BEGIN` kind.
 *
 * @example
 * ```ts
 * import { Database, type TransactionFunction } from "./database.ts";
 * const db = new Database(":memory:");
 * db.exec("CREATE TABLE kv (k TEXT PRIMARY KEY, v INTEGER)");
 * const put: TransactionFunction<[string, number], void> = db.transaction((k, v) => {
 *   db.prepare("INSERT OR REPLACE INTO kv VALUES (?, ?)").run(k, v);
 * });
 * put.immediate("a", 1); // takes the write lock before reading
 * db.close();
 * ```
 */
export type TransactionFunction<A extends unknown[], R> = ((...args: A) => R) & {
  /** Runs in `BEGIN DEFERRED` (the default form). */
  deferred: (...args: A) => R;
  /** Runs in `BEGIN IMMEDIATE`: takes the write lock first. */
  immediate: (...args: A) => R;
  /** Runs in `BEGIN EXCLUSIVE`. */
  exclusive: (...args: A) => R;
};

/**
 * A connection to a SQLite database through FFI, in the shape of `@db/sqlite`.
 * The library is `DENO_SQLITE_PATH` when set, else the system `libsqlite3`.
 *
 * @example
 * ```ts
 * import { Database } from "./database.ts";
 * const db = new Database(":memory:");
 * db.exec("CREATE TABLE kv (k TEXT PRIMARY KEY, v INTEGER)");
 * db.prepare("INSERT INTO kv VALUES (?, ?)").run("a", 1);
 * console.log(db.prepare("SELECT v FROM kv").value()); // [1]
 * db.close();
 * ```
 */
export class Database {
  #sym: SqliteSymbols;
  #handle: bigint;
  #path: string;
  #statements = new Set<Statement>();

  /**
   * Opens (and by default creates) a database.
   *
   * @param path A file path, or `":memory:"`.
   * @param options Read-only, create and in-memory flags, and the VFS.
   */
  constructor(path: string | URL, options: DatabaseOptions = {}) {
    this.#sym = loadLibrary().symbols;
    this.#path = path instanceof URL ? fromFileUrl(path) : path;
    let flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI;
    if (options.readonly) flags |= SQLITE_OPEN_READONLY;
    else {
      flags |= SQLITE_OPEN_READWRITE;
      if (options.create !== false) flags |= SQLITE_OPEN_CREATE;
    }
    if (options.memory) flags |= SQLITE_OPEN_MEMORY;
    const out = new BigUint64Array(1);
    const name = encoder.encode((options.memory ? ":memory:" : this.#path) + "\0");
    const vfs = options.vfs ? encoder.encode(options.vfs + "\0") : null;
    const rc = this.#sym.sqlite3_open_v2(name, out, flags, vfs);
    this.#handle = out[0]!;
    if (rc !== SQLITE_OK) {
      const message = this.#handle
        ? readCString(this.#sym, this.#sym.sqlite3_errmsg(this.#handle))
        : readCString(this.#sym, this.#sym.sqlite3_errstr(rc));
      if (this.#handle) this.#sym.sqlite3_close_v2(this.#handle);
      this.#handle = 0n;
      throw new SqliteError(rc, `Cannot open database "${this.#path}": ${message}`);
    }
    this.#sym.sqlite3_extended_result_codes(this.#handle, 1);
  }

  /** The path the database was opened with. */
  get path(): string {
    return this.#path;
  }

  /** Whether the connection is open. */
  get open(): boolean {
    return this.#handle !== 0n;
  }

  /** Whether a transaction is open (the connection is not in autocommit mode). */
  get inTransaction(): boolean {
    return this.open && this.#sym.sqlite3_get_autocommit(this.#handle) === 0;
  }

  /** The rowid of the last successful INSERT on this connection. */
  get lastInsertRowId(): number | bigint {
    return toNumber(this.#sym.sqlite3_last_insert_rowid(this._handle));
  }

  /** Rows changed by the last INSERT, UPDATE or DELETE. */
  get changes(): number {
    return this.#sym.sqlite3_changes(this._handle);
  }

  /** Rows changed since the connection opened. */
  get totalChanges(): number {
    return this.#sym.sqlite3_total_changes(this._handle);
  }

  /**
   * Sets how long a statement waits for a lock held by another connection before it
   * fails with SQLITE_BUSY (code 5).
   *
   * @param ms Milliseconds; 0 fails at once.
   */
  setBusyTimeout(ms: number): void {
    this.#sym.sqlite3_busy_timeout(this._handle, ms);
  }

  /**
   * Runs SQL. With parameters, runs the one statement; without, runs every statement
   * in the text.
   *
   * @param sql The SQL text.
   * @param params Values bound to a single statement.
   * @returns The number of rows changed by the last statement.
   */
  exec(sql: string, ...params: StatementParameters): number {
    if (params.length > 0) {
      const statement = this.prepare(sql);
      try {
        return statement.run(...params);
      } finally {
        statement.finalize();
      }
    }
    const errorOut = new BigUint64Array(1);
    const rc = this.#sym.sqlite3_exec(
      this._handle,
      encoder.encode(sql + "\0"),
      0n,
      0n,
      errorOut,
    );
    if (rc !== SQLITE_OK) {
      const address = errorOut[0]!;
      const message = address ? readCString(this.#sym, address) : undefined;
      if (address) this.#sym.sqlite3_free(address);
      throw this._error(rc, message);
    }
    return this.changes;
  }

  /**
   * Compiles one SQL statement.
   *
   * @param sql The SQL text of one statement.
   * @returns The prepared statement.
   */
  prepare(sql: string): Statement {
    const out = new BigUint64Array(1);
    const bytes = encoder.encode(sql);
    const rc = this.#sym.sqlite3_prepare_v2(
      this._handle,
      bytes.length ? bytes : EMPTY,
      bytes.length,
      out,
      0n,
    );
    if (rc !== SQLITE_OK) throw this._error(rc, undefined, sql);
    if (out[0] === 0n) {
      throw new SqliteError(SQLITE_MISUSE, `Cannot prepare statement: no SQL in "${sql}"`);
    }
    const statement = new Statement(this, this.#sym, out[0]!, sql);
    this.#statements.add(statement);
    return statement;
  }

  /**
   * Wraps `fn` so that each call runs inside a transaction: COMMIT when it returns,
   * ROLLBACK when it throws. Nested calls use a savepoint.
   *
   * @param fn The work to run atomically.
   * @returns The wrapped function, with `deferred`, `immediate` and `exclusive` forms.
   */
  transaction<A extends unknown[], R>(fn: (...args: A) => R): TransactionFunction<A, R> {
    const wrap = (begin: string) => (...args: A): R => {
      if (this.inTransaction) {
        this.exec("SAVEPOINT nested");
        try {
          const result = fn(...args);
          this.exec("RELEASE nested");
          return result;
        } catch (error) {
          this.exec("ROLLBACK TO nested");
          this.exec("RELEASE nested");
          throw error;
        }
      }
      this.exec(begin);
      try {
        const result = fn(...args);
        this.exec("COMMIT");
        return result;
      } catch (error) {
        if (this.inTransaction) this.exec("ROLLBACK");
        throw error;
      }
    };
    return Object.assign(wrap("BEGIN"), {
      deferred: wrap("BEGIN DEFERRED"),
      immediate: wrap("BEGIN IMMEDIATE"),
      exclusive: wrap("BEGIN EXCLUSIVE"),
    });
  }

  /** Finalizes every open statement and closes the connection. Idempotent. */
  close(): void {
    if (this.#handle === 0n) return;
    for (const statement of [...this.#statements]) statement.finalize();
    const rc = this.#sym.sqlite3_close_v2(this.#handle);
    this.#handle = 0n;
    if (rc !== SQLITE_OK) throw new SqliteError(rc, `Cannot close database "${this.#path}"`);
  }

  /** Closes the connection at the end of a `using` block. */
  [Symbol.dispose](): void {
    this.close();
  }

  /** @internal The native handle; throws when closed. */
  get _handle(): bigint {
    if (this.#handle === 0n) {
      throw new SqliteError(
        SQLITE_MISUSE,
        `Cannot use database "${this.#path}": it was closed (open it again)`,
      );
    }
    return this.#handle;
  }

  /** @internal Drops a finalized statement from the open set. */
  _forget(statement: Statement): void {
    this.#statements.delete(statement);
  }

  /** @internal Builds the error for result code `rc`. */
  _error(rc: number, message?: string, sql?: string): SqliteError {
    const extended = this.#handle ? this.#sym.sqlite3_extended_errcode(this.#handle) : rc;
    const code = (extended & 0xff) === (rc & 0xff) ? extended : rc;
    const text = message ??
      (this.#handle
        ? readCString(this.#sym, this.#sym.sqlite3_errmsg(this.#handle))
        : readCString(this.#sym, this.#sym.sqlite3_errstr(rc)));
    return new SqliteError(code, sql ? `${text}: ${sql}` : text);
  }
}
