/**
 * A synchronous SQLite binding over FFI (`Deno.dlopen`), in the shape of
 * `@db/sqlite`: swap one import to move between them. The library is
 * `DENO_SQLITE_PATH` when set, else the system `libsqlite3`.
 *
 * @example
 * ```ts
 * import { Database, sqliteVersion } from "./mod.ts";
 * const db = new Database(":memory:");
 * db.exec("CREATE TABLE t (x)");
 * db.prepare("INSERT INTO t VALUES (?)").run(2n ** 60n);
 * console.log(sqliteVersion(), db.prepare("SELECT x FROM t").value());
 * db.close();
 * ```
 *
 * @module
 */
export {
  Database,
  type DatabaseOptions,
  sqliteLibraryPath,
  sqliteVersion,
  type TransactionFunction,
} from "./database.ts";
export {
  type BindParameters,
  type BindValue,
  type Row,
  type SqliteValue,
  Statement,
  type StatementParameters,
} from "./statement.ts";
export { SqliteError } from "./sqlite_error.ts";
export { SqliteLibraryError, systemLibraryPath } from "./library.ts";
// The result codes a caller compares `SqliteError.code` and `.extendedCode` with; the open
// flags and type codes stay inside the binding.
export {
  SQLITE_ABORT,
  SQLITE_AUTH,
  SQLITE_BUSY,
  SQLITE_CANTOPEN,
  SQLITE_CONSTRAINT,
  SQLITE_CORRUPT,
  SQLITE_DONE,
  SQLITE_EMPTY,
  SQLITE_ERROR,
  SQLITE_FORMAT,
  SQLITE_FULL,
  SQLITE_INTERNAL,
  SQLITE_INTERRUPT,
  SQLITE_IOERR,
  SQLITE_IOERR_CLOSE,
  SQLITE_IOERR_DELETE,
  SQLITE_IOERR_FSYNC,
  SQLITE_IOERR_TRUNCATE,
  SQLITE_IOERR_WRITE,
  SQLITE_LOCKED,
  SQLITE_MISMATCH,
  SQLITE_MISUSE,
  SQLITE_NOLFS,
  SQLITE_NOMEM,
  SQLITE_NOTADB,
  SQLITE_NOTFOUND,
  SQLITE_NOTICE,
  SQLITE_OK,
  SQLITE_PERM,
  SQLITE_PROTOCOL,
  SQLITE_RANGE,
  SQLITE_READONLY,
  SQLITE_ROW,
  SQLITE_SCHEMA,
  SQLITE_TOOBIG,
  SQLITE_WARNING,
} from "./constants.ts";
