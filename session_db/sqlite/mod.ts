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
export * from "./database.ts";
export * from "./statement.ts";
export * from "./sqlite_error.ts";
export * from "./constants.ts";
export { SqliteLibraryError, systemLibraryPath } from "./library.ts";
