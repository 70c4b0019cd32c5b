import {
  copyBytes,
  EMPTY,
  encodeShortAscii,
  readCString,
  readText,
  type SqliteSymbols,
  toNumber,
} from "./_ffi.ts";
import {
  SQLITE_BLOB,
  SQLITE_DONE,
  SQLITE_FLOAT,
  SQLITE_INTEGER,
  SQLITE_MISUSE,
  SQLITE_OK,
  SQLITE_RANGE,
  SQLITE_ROW,
  SQLITE_TEXT,
  SQLITE_TRANSIENT,
} from "./constants.ts";
import { SqliteError } from "./sqlite_error.ts";

/**
 * A value SQLite can store and return.
 *
 * @example
 * ```ts
 * import { Database } from "./database.ts";
 * import type { SqliteValue } from "./statement.ts";
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
 * import { Database } from "./database.ts";
 * import type { BindValue } from "./statement.ts";
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
 * import { Database } from "./database.ts";
 * import type { BindParameters } from "./statement.ts";
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
 * import { Database } from "./database.ts";
 * import type { Row } from "./statement.ts";
 * const db = new Database(":memory:");
 * const row: Row | undefined = db.prepare("SELECT 1 AS one, 'x' AS letter").get();
 * console.log(row); // { one: 1, letter: "x" }
 * db.close();
 * ```
 */
export type Row = Record<string, SqliteValue>;

const encoder = new TextEncoder();
let bindScratch = new Uint8Array(4096); // UTF-8 of bound text, reused
const SCRATCH_LIMIT = 1 << 20;
const UNBOUND = Symbol("unbound");

function isNamed(value: unknown): value is BindParameters {
  return typeof value === "object" && value !== null && !(value instanceof Uint8Array) &&
    !(value instanceof Date) && !Array.isArray(value);
}

/**
 * The arguments of {@linkcode Statement.run} and friends: positional values, one
 * array of them, or one object of named values.
 *
 * @example
 * ```ts
 * import { Database } from "./database.ts";
 * import type { StatementParameters } from "./statement.ts";
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
 * What a statement needs of the connection that prepared it (a `Database`): its native
 * handle, the error for a result code, and to be dropped from its open set once finalized.
 */
interface Connection {
  readonly _handle: bigint;
  _error(rc: number): SqliteError;
  _forget(statement: Statement): void;
}

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
  #db: Connection;
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
  constructor(db: Connection, sym: SqliteSymbols, handle: bigint, sql: string) {
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
        rc = sym.sqlite3_bind_text(h, index, bytes, bytes.length, SQLITE_TRANSIENT);
      } else {
        const length = encodeShortAscii(value, bindScratch);
        const written = length >= 0 ? length : encoder.encodeInto(value, bindScratch).written;
        rc = sym.sqlite3_bind_text(h, index, bindScratch, written, SQLITE_TRANSIENT);
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
        SQLITE_TRANSIENT,
      );
    } else if (value instanceof Date) {
      const bytes = encoder.encode(value.toISOString());
      rc = sym.sqlite3_bind_text(h, index, bytes, bytes.length, SQLITE_TRANSIENT);
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
      case SQLITE_INTEGER: {
        // The integer as a double is exact while it is a safe integer; only larger ones
        // cross again as a BigInt (an i64 result allocates one on every call).
        const exact = sym.sqlite3_column_double(h, i);
        return Number.isSafeInteger(exact) ? exact : toNumber(sym.sqlite3_column_int64(h, i));
      }
      case SQLITE_FLOAT:
        return sym.sqlite3_column_double(h, i);
      case SQLITE_TEXT: {
        const address = sym.sqlite3_column_text(h, i);
        return readText(sym, address, sym.sqlite3_column_bytes(h, i));
      }
      case SQLITE_BLOB: {
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
