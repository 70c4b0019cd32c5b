/**
 * The base of every error the session store raises on purpose. Each keeps the
 * underlying `cause` (usually a `SqliteError`) when there is one.
 *
 * @example
 * ```ts
 * import { SessionDBError } from "./errors.ts";
 * const error = new SessionDBError("Cannot do x: because y");
 * console.log(error instanceof Error); // true
 * ```
 */
export class SessionDBError extends Error {
  /**
   * Creates the error.
   *
   * @param message Sentence case, the detail after a colon.
   * @param options `cause`, when the error wraps another.
   */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** The database cannot be opened: missing folder, not a database, unusable journal mode. */
export class SessionDBOpenError extends SessionDBError {}

/** The file was written by a newer schema than this store knows; it was left untouched. */
export class SchemaVersionError extends SessionDBError {}

/** An argument is invalid (empty or over-long id, unknown role, bad option). */
export class InvalidArgumentError extends SessionDBError {}

/** The session does not exist. */
export class SessionNotFoundError extends SessionDBError {}

/** The session was ended by a compression rotation; write to its continuation instead. */
export class CompressionSessionClosedError extends SessionDBError {}

/** The session has already ended. */
export class SessionEndedError extends SessionDBError {}

/** The compression lock is missing, held by another live holder, or expired. */
export class CompressionLockError extends SessionDBError {}

/** A compare-and-swap on active message ids failed: the transcript changed underneath. */
export class RewindConflictError extends SessionDBError {}

/**
 * The file or its folder refused an operation after open: read-only, full, corrupt or
 * an I/O error. The transaction was rolled back; what was acknowledged before is intact.
 */
export class SessionDBStorageError extends SessionDBError {}

/** The write lock stayed busy past the retry deadline. */
export class BusyDeadlineError extends SessionDBError {}

/** The store was used after `close()`. */
export class SessionDBClosedError extends SessionDBError {}

/** `SESSION_DB_CRASH_AT` names no known crash point, or is malformed. */
export class CrashPointError extends SessionDBError {}
