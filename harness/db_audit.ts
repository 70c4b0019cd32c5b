import { Database } from "../session_db/sqlite/database.ts";
import { observeJournalMode } from "./legs.ts";

/**
 * Runs read-only queries on a database file through a separate connection, so the
 * audit does not depend on the store under test.
 *
 * @param path The database file.
 * @param fn What to read.
 * @returns What `fn` returned.
 * @example
 * ```ts
 * import { withReadOnly } from "./db_audit.ts";
 * // const n = withReadOnly(path, (db) => db.prepare("SELECT count(*) FROM messages").value());
 * ```
 */
export function withReadOnly<T>(path: string, fn: (db: Database) => T): T {
  const db = new Database(path, { readonly: true });
  try {
    return fn(db);
  } finally {
    db.close();
  }
}

/**
 * `PRAGMA integrity_check` through a separate read-only connection.
 *
 * @param path The database file.
 * @returns `"ok"`, or the problems joined by `; `.
 * @example
 * ```ts
 * import { integrityCheck } from "./db_audit.ts";
 * import { SessionDB } from "../session_db/session_db.ts";
 * const path = `${Deno.makeTempDirSync()}/s.db`;
 * SessionDB.open(path).close();
 * console.log(integrityCheck(path)); // "ok"
 * ```
 */
export function integrityCheck(path: string): string {
  return withReadOnly(
    path,
    (db) => db.prepare("PRAGMA integrity_check").values<[string]>().map((r) => r[0]).join("; "),
  );
}

/**
 * `PRAGMA integrity_check` when the file is an SQLite database; `undefined` for a store
 * of another kind (nothing for SQLite to check: the store's own `checkInvariants`
 * stands in).
 *
 * @param path The store's file.
 * @returns `"ok"`, the problems, or `undefined` when the file is not SQLite.
 * @example
 * ```ts
 * import { integrityIfSqlite } from "./db_audit.ts";
 * const path = `${Deno.makeTempDirSync()}/log.jsonl`;
 * Deno.writeTextFileSync(path, '{"id":1}\n');
 * console.log(integrityIfSqlite(path)); // undefined
 * ```
 */
export function integrityIfSqlite(path: string): string | undefined {
  const mode = observeJournalMode(path, "integrity check", true).mode;
  if (mode === "not-sqlite" || mode === "missing") return undefined;
  return integrityCheck(path);
}
