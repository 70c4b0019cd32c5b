import { fromFileUrl } from "../../internal/path.ts";
import {
  copyBytes,
  encodeShortAscii,
  loadLibrary,
  readCString,
  readText,
  type SqliteSymbols,
} from "./_ffi.ts";

/**
 * A value SQLite can store and return.
 *
 * @example
 * ```ts
 * import { Database, type SqliteValue } from "./database.ts";
 * const db = new Database(":memory:");
 * const row: SqliteValue[] | undefined = db.prepare("SELECT 1, 'a', NULL, x'01'").value();
 * console.log(row); // [1, "a", null, Uint8Array [1]]
 * db.close();
 * ```
 */
export type SqliteValue = string | number | bigint | null | Uint8Array;

/**
 * A value that can be bound to a statement parameter.
 *
 * @example
 * ```ts
 * import { type BindValue, Database } from "./database.ts";
 * const db = new Database(":memory:");
 * const params: BindValue[] = ["a", 1, 2n, null, new Uint8Array([1])];
 * console.log(db.prepare("SELECT ?, ?, ?, ?, ?").value(...params)); // ["a", 1, 2, null, [1]]
 * db.close();
 * ```
 */
export type BindValue = SqliteValue | boolean | undefined | Date;

/**
 * Named parameters: keys match `:name`, `@name` or `$name` in the SQL.
 *
 * @example
 * ```ts
 * import { type BindParameters, Database } from "./database.ts";
 * const db = new Database(":memory:");
 * db.exec("CREATE TABLE kv (k TEXT PRIMARY KEY, v INTEGER)");
 * const params: BindParameters = { k: "a", v: 1 };
 * console.log(db.prepare("INSERT INTO kv VALUES (:k, :v)").run(params)); // 1
 * db.close();
 * ```
 */
export type BindParameters = Record<string, BindValue>;

/**
 * A row read as an object keyed by column name.
 *
 * @example
 * ```ts
 * import { Database, type Row } from "./database.ts";
 * const db = new Database(":memory:");
 * const row: Row | undefined = db.prepare("SELECT 1 AS one, 'x' AS letter").get();
 * console.log(row); // { one: 1, letter: "x" }
 * db.close();
 * ```
 */
export type Row = Record<string, SqliteValue>;

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

const SQLITE_OK = 0;
const SQLITE_ROW = 100;
const SQLITE_DONE = 101;
const SQLITE_MISUSE = 21;
const SQLITE_RANGE = 25;

const OPEN_READONLY = 0x1;
const OPEN_READWRITE = 0x2;
const OPEN_CREATE = 0x4;
const OPEN_URI = 0x40;
const OPEN_MEMORY = 0x80;
const OPEN_NOMUTEX = 0x8000;

// SQLITE_TRANSIENT: SQLite copies bound text and blobs before the call returns.
const TRANSIENT = -1n;

const encoder = new TextEncoder();
const EMPTY = new Uint8Array(1); // a non-NULL pointer for zero-length text and blobs
let bindScratch = new Uint8Array(4096); // UTF-8 of bound text, reused
const SCRATCH_LIMIT = 1 << 20;
const UNBOUND = Symbol("unbound");

/**
 * An error reported by SQLite, with its primary result code (`code`, e.g. 5 for
 * SQLITE_BUSY, 19 for SQLITE_CONSTRAINT) and the extended code.
 *
 * @example
 * ```ts
 * import { Database, SqliteError } from "./database.ts";
 * const db = new Database(":memory:");
 * try {
 *   db.exec("SELEC 1");
 * } catch (error) {
 *   if (error instanceof SqliteError) console.log(error.code); // 1
 * }
 * db.close();
 * ```
 */
export class SqliteError extends Error {
  /** The primary result code (`extendedCode & 0xff`). */
  readonly code: number;
  /** The extended result code. */
  readonly extendedCode: number;

  /**
   * Creates an error from a result code and SQLite's message.
   *
   * @param extendedCode The (extended) result code.
   * @param message What SQLite said.
   * @param options `cause`, when the error wraps another.
   */
  constructor(extendedCode: number, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "SqliteError";
    this.extendedCode = extendedCode;
    this.code = extendedCode & 0xff;
  }
}

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

function isNamed(value: unknown): value is BindParameters {
  return typeof value === "object" && value !== null && !(value instanceof Uint8Array) &&
    !(value instanceof Date) && !Array.isArray(value);
}

function toNumber(value: number | bigint): number | bigint {
  if (typeof value === "number") return value;
  return value >= -9007199254740991n && value <= 9007199254740991n ? Number(value) : value;
}

/**
 * The arguments of {@linkcode Statement.run} and friends: positional values, one
 * array of them, or one object of named values.
 *
 * @example
 * ```ts
 * import { Database, type StatementParameters } from "./database.ts";
 * const db = new Database(":memory:");
 * const positional: StatementParameters = [1, 2];
 * const named: StatementParameters = [{ a: 1, b: 2 }];
 * console.log(db.prepare("SELECT ? + ?").value(...positional)); // [3]
 * console.log(db.prepare("SELECT :a + :b").value(...named)); // [3]
 * db.close();
 * ```
 */
export type StatementParameters = BindValue[] | [BindParameters] | [BindValue[]];

/**
 * A prepared statement. Obtain one from {@linkcode Database.prepare}; it is
 * finalized by {@linkcode Statement.finalize}, by `using`, or when its database closes.
 *
 * @example
 * ```ts
 * import { Database } from "./database.ts";
 * const db = new Database(":memory:");
 * db.exec("CREATE TABLE t (a INTEGER, b TEXT)");
 * using insert = db.prepare("INSERT INTO t VALUES (?, ?)");
 * insert.run(1, "one");
 * console.log(db.prepare("SELECT b FROM t WHERE a = :a").get({ a: 1 })); // { b: "one" }
 * db.close();
 * ```
 */
export class Statement {
  #db: Database;
  #sym: SqliteSymbols;
  #handle: bigint;
  #sql: string;
  #paramCount: number;
  // What each parameter holds now (index 1..n), for primitives; `UNBOUND` where unknown.
  // Bindings survive sqlite3_reset, so a parameter that gets the same value again (a
  // session id, a role, a NULL) is not bound again: no FFI crossing, no UTF-8 copy.
  #bound: unknown[];
  #paramNames: (string | null)[] | undefined;
  #columns: string[] | undefined;

  /** @internal Use {@linkcode Database.prepare}. */
  constructor(db: Database, sym: SqliteSymbols, handle: bigint, sql: string) {
    this.#db = db;
    this.#sym = sym;
    this.#handle = handle;
    this.#sql = sql;
    this.#paramCount = sym.sqlite3_bind_parameter_count(handle);
    this.#bound = new Array(this.#paramCount + 1).fill(UNBOUND);
  }

  /** The SQL text this statement was prepared from. */
  get sql(): string {
    return this.#sql;
  }

  /** Whether the statement was finalized. */
  get finalized(): boolean {
    return this.#handle === 0n;
  }

  /** Column names of the result set. */
  get columnNames(): string[] {
    return this.#columnNames();
  }

  /**
   * Runs the statement to completion.
   *
   * @param params Positional values, one array of them, or one object of named values.
   * @returns The number of rows changed.
   */
  run(...params: StatementParameters): number {
    this.#bind(params);
    try {
      let rc: number;
      while ((rc = this.#sym.sqlite3_step(this.#handle)) === SQLITE_ROW);
      if (rc !== SQLITE_DONE) throw this.#db._error(rc);
      return this.#sym.sqlite3_changes(this.#db._handle);
    } finally {
      this.#sym.sqlite3_reset(this.#handle);
    }
  }

  /**
   * Returns the first row as an object, or `undefined` when there is none.
   *
   * @param params Positional values, one array of them, or one object of named values.
   * @returns The row keyed by column name.
   */
  get<T extends object = Row>(...params: StatementParameters): T | undefined {
    this.#bind(params);
    try {
      const rc = this.#sym.sqlite3_step(this.#handle);
      if (rc === SQLITE_ROW) return this.#rowObject() as T;
      if (rc !== SQLITE_DONE) throw this.#db._error(rc);
      return undefined;
    } finally {
      this.#sym.sqlite3_reset(this.#handle);
    }
  }

  /**
   * Returns every row as an object.
   *
   * @param params Positional values, one array of them, or one object of named values.
   * @returns The rows keyed by column name.
   */
  all<T extends object = Row>(...params: StatementParameters): T[] {
    this.#bind(params);
    const rows: T[] = [];
    try {
      let rc: number;
      while ((rc = this.#sym.sqlite3_step(this.#handle)) === SQLITE_ROW) {
        rows.push(this.#rowObject() as T);
      }
      if (rc !== SQLITE_DONE) throw this.#db._error(rc);
      return rows;
    } finally {
      this.#sym.sqlite3_reset(this.#handle);
    }
  }

  /**
   * Returns every row as an array of column values.
   *
   * @param params Positional values, one array of them, or one object of named values.
   * @returns The rows in column order.
   */
  values<T extends unknown[] = SqliteValue[]>(...params: StatementParameters): T[] {
    this.#bind(params);
    const rows: T[] = [];
    try {
      let rc: number;
      while ((rc = this.#sym.sqlite3_step(this.#handle)) === SQLITE_ROW) {
        rows.push(this.#rowArray() as T);
      }
      if (rc !== SQLITE_DONE) throw this.#db._error(rc);
      return rows;
    } finally {
      this.#sym.sqlite3_reset(this.#handle);
    }
  }

  /**
   * Returns the first row as an array of column values, or `undefined`.
   *
   * @param params Positional values, one array of them, or one object of named values.
   * @returns The first row in column order.
   */
  value<T extends unknown[] = SqliteValue[]>(...params: StatementParameters): T | undefined {
    this.#bind(params);
    try {
      const rc = this.#sym.sqlite3_step(this.#handle);
      if (rc === SQLITE_ROW) return this.#rowArray() as T;
      if (rc !== SQLITE_DONE) throw this.#db._error(rc);
      return undefined;
    } finally {
      this.#sym.sqlite3_reset(this.#handle);
    }
  }

  /** Releases the statement; later use is an error. Idempotent. */
  finalize(): void {
    if (this.#handle === 0n) return;
    this.#sym.sqlite3_finalize(this.#handle);
    this.#handle = 0n;
    this.#db._forget(this);
  }

  /** Finalizes the statement at the end of a `using` block. */
  [Symbol.dispose](): void {
    this.finalize();
  }

  #columnNames(): string[] {
    if (this.#columns) return this.#columns;
    this.#alive();
    const count = this.#sym.sqlite3_column_count(this.#handle);
    const names: string[] = [];
    for (let i = 0; i < count; i++) {
      names.push(readCString(this.#sym, this.#sym.sqlite3_column_name(this.#handle, i)));
    }
    return this.#columns = names;
  }

  #alive(): void {
    if (this.#handle === 0n) {
      throw new SqliteError(
        SQLITE_MISUSE,
        `Cannot use statement: it was finalized (prepare it again): ${this.#sql}`,
      );
    }
  }

  #bind(params: StatementParameters): void {
    this.#alive();
    const first = params[0];
    if (params.length === 1 && Array.isArray(first)) {
      this.#bindPositional(first);
    } else if (params.length === 1 && isNamed(first)) {
      this.#bindNamed(first);
    } else {
      this.#bindPositional(params as BindValue[]);
    }
  }

  #bindPositional(values: BindValue[]): void {
    if (values.length > this.#paramCount) {
      throw new SqliteError(
        SQLITE_RANGE,
        `Cannot bind ${values.length} values: the statement takes ${this.#paramCount}: ${this.#sql}`,
      );
    }
    if (values.length < this.#paramCount) this.#clearBindings();
    for (let i = 0; i < values.length; i++) this.#bindOne(i + 1, values[i]);
  }

  #bindNamed(values: BindParameters): void {
    if (!this.#paramNames) {
      this.#paramNames = [];
      for (let i = 1; i <= this.#paramCount; i++) {
        const name = readCString(
          this.#sym,
          this.#sym.sqlite3_bind_parameter_name(this.#handle, i),
        );
        this.#paramNames.push(name ? name.slice(1) : null);
      }
    }
    this.#clearBindings();
    for (let i = 0; i < this.#paramNames.length; i++) {
      const name = this.#paramNames[i];
      if (name === null || name === undefined) continue;
      if (!(name in values)) {
        throw new SqliteError(
          SQLITE_RANGE,
          `Cannot bind named parameters: missing value for "${name}": ${this.#sql}`,
        );
      }
      this.#bindOne(i + 1, values[name]);
    }
  }

  #clearBindings(): void {
    this.#sym.sqlite3_clear_bindings(this.#handle);
    this.#bound.fill(UNBOUND);
  }

  #bindOne(index: number, value: BindValue): void {
    if (value === undefined) value = null;
    if (Object.is(this.#bound[index], value)) return;
    this.#bound[index] = UNBOUND; // until the bind below succeeds
    const sym = this.#sym;
    const h = this.#handle;
    let rc: number;
    if (value === null) {
      rc = sym.sqlite3_bind_null(h, index);
    } else if (typeof value === "string") {
      // encodeInto a reused buffer (SQLITE_TRANSIENT copies it): no allocation per value.
      // Values over the scratch limit get their own buffer so it never pins megabytes.
      const bound = value.length * 3;
      if (bound > bindScratch.length && bound <= SCRATCH_LIMIT) {
        bindScratch = new Uint8Array(bound);
      }
      if (bound > bindScratch.length) {
        const bytes = encoder.encode(value);
        rc = sym.sqlite3_bind_text(h, index, bytes, bytes.length, TRANSIENT);
      } else {
        const length = encodeShortAscii(value, bindScratch);
        const written = length >= 0 ? length : encoder.encodeInto(value, bindScratch).written;
        rc = sym.sqlite3_bind_text(h, index, bindScratch, written, TRANSIENT);
      }
    } else if (typeof value === "number") {
      rc = Number.isSafeInteger(value)
        ? sym.sqlite3_bind_int64(h, index, BigInt(value))
        : sym.sqlite3_bind_double(h, index, value);
    } else if (typeof value === "bigint") {
      if (value < -(2n ** 63n) || value >= 2n ** 63n) {
        throw new RangeError(`Cannot bind ${value}: it does not fit a 64-bit signed integer`);
      }
      rc = sym.sqlite3_bind_int64(h, index, value);
    } else if (typeof value === "boolean") {
      rc = sym.sqlite3_bind_int64(h, index, value ? 1n : 0n);
    } else if (value instanceof Uint8Array) {
      rc = sym.sqlite3_bind_blob(
        h,
        index,
        value.length === 0 ? EMPTY : value,
        value.length,
        TRANSIENT,
      );
    } else if (value instanceof Date) {
      const bytes = encoder.encode(value.toISOString());
      rc = sym.sqlite3_bind_text(h, index, bytes, bytes.length, TRANSIENT);
    } else {
      throw new TypeError(
        `Cannot bind parameter ${index}: unsupported type ${typeof value} (use string, number, bigint, boolean, null, Uint8Array or Date)`,
      );
    }
    if (rc !== SQLITE_OK) throw this.#db._error(rc);
    // Blobs and dates can change in place; long text is not worth pinning a copy in JS.
    if (
      value === null ||
      (typeof value !== "object" && !(typeof value === "string" && value.length > 1024))
    ) {
      this.#bound[index] = value;
    }
  }

  #column(i: number): SqliteValue {
    const sym = this.#sym;
    const h = this.#handle;
    switch (sym.sqlite3_column_type(h, i)) {
      case 1: {
        // The integer as a double is exact while it is a safe integer; only larger ones
        // cross again as a BigInt (an i64 result allocates one on every call).
        const exact = sym.sqlite3_column_double(h, i);
        return Number.isSafeInteger(exact) ? exact : toNumber(sym.sqlite3_column_int64(h, i));
      }
      case 2:
        return sym.sqlite3_column_double(h, i);
      case 3: {
        const address = sym.sqlite3_column_text(h, i);
        return readText(sym, address, sym.sqlite3_column_bytes(h, i));
      }
      case 4: {
        const address = sym.sqlite3_column_blob(h, i);
        return copyBytes(sym, address, sym.sqlite3_column_bytes(h, i));
      }
      default:
        return null;
    }
  }

  #rowObject(): Row {
    const names = this.#columnNames();
    const row: Row = {};
    for (let i = 0; i < names.length; i++) row[names[i]!] = this.#column(i);
    return row;
  }

  #rowArray(): SqliteValue[] {
    const count = this.#columnNames().length;
    const row: SqliteValue[] = new Array(count);
    for (let i = 0; i < count; i++) row[i] = this.#column(i);
    return row;
  }
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
    let flags = OPEN_NOMUTEX | OPEN_URI;
    if (options.readonly) flags |= OPEN_READONLY;
    else {
      flags |= OPEN_READWRITE;
      if (options.create !== false) flags |= OPEN_CREATE;
    }
    if (options.memory) flags |= OPEN_MEMORY;
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
