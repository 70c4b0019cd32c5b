/**
 * An error reported by SQLite, with its primary result code (`code`, e.g. 5 for
 * SQLITE_BUSY, 19 for SQLITE_CONSTRAINT) and the extended code.
 *
 * @example
 * ```ts
 * import { Database } from "./database.ts";
 * import { SqliteError } from "./sqlite_error.ts";
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
