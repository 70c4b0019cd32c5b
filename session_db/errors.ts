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

/**
 * The database cannot be opened: missing folder, not a database, unusable journal mode.
 *
 * @example
 * ```ts
 * import { SessionDBOpenError } from "./errors.ts";
 * import { SessionDB } from "./session_db.ts";
 * try {
 *   SessionDB.open("/no/such/folder/sessions.db");
 * } catch (error) {
 *   console.log(error instanceof SessionDBOpenError); // true
 * }
 * ```
 */
export class SessionDBOpenError extends SessionDBError {}

/**
 * The file was written by a newer schema than this store knows; it was left untouched.
 *
 * @example
 * ```ts
 * import { SchemaVersionError } from "./errors.ts";
 * import { SessionDB } from "./session_db.ts";
 * function openUnlessNewer(path: string): SessionDB | undefined {
 *   try {
 *     return SessionDB.open(path);
 *   } catch (error) {
 *     if (error instanceof SchemaVersionError) return undefined; // upgrade the store instead
 *     throw error;
 *   }
 * }
 * ```
 */
export class SchemaVersionError extends SessionDBError {}

/**
 * An argument is invalid (empty or over-long id, unknown role, bad option).
 *
 * @example
 * ```ts
 * import { InvalidArgumentError } from "./errors.ts";
 * import { SessionDB } from "./session_db.ts";
 * const db = SessionDB.open(`${Deno.makeTempDirSync()}/s.db`);
 * try {
 *   db.createSession("");
 * } catch (error) {
 *   console.log(error instanceof InvalidArgumentError); // true
 * }
 * db.close();
 * ```
 */
export class InvalidArgumentError extends SessionDBError {}

/**
 * The session does not exist.
 *
 * @example
 * ```ts
 * import { SessionNotFoundError } from "./errors.ts";
 * import { SessionDB } from "./session_db.ts";
 * const db = SessionDB.open(`${Deno.makeTempDirSync()}/s.db`);
 * try {
 *   db.appendMessage("missing", { role: "user", content: "hello" });
 * } catch (error) {
 *   console.log(error instanceof SessionNotFoundError); // true
 * }
 * db.close();
 * ```
 */
export class SessionNotFoundError extends SessionDBError {}

/**
 * The session was ended by a compression rotation; write to its continuation instead.
 *
 * @example
 * ```ts
 * import { CompressionSessionClosedError } from "./errors.ts";
 * import type { SessionDB } from "./session_db.ts";
 * import type { NewMessage } from "./types.ts";
 * function append(db: SessionDB, sessionId: string, message: NewMessage): number {
 *   try {
 *     return db.appendMessage(sessionId, message);
 *   } catch (error) {
 *     if (!(error instanceof CompressionSessionClosedError)) throw error;
 *     return db.appendMessage(db.resolveResumeSessionId(sessionId), message);
 *   }
 * }
 * ```
 */
export class CompressionSessionClosedError extends SessionDBError {}

/**
 * The session has already ended.
 *
 * @example
 * ```ts
 * import { SessionEndedError } from "./errors.ts";
 * import type { SessionDB } from "./session_db.ts";
 * import type { CompressionPublish } from "./types.ts";
 * function publishOnce(db: SessionDB, publish: CompressionPublish): boolean {
 *   try {
 *     return db.publishCompressionChild(publish) !== undefined;
 *   } catch (error) {
 *     if (error instanceof SessionEndedError) return false; // already rotated or ended
 *     throw error;
 *   }
 * }
 * ```
 */
export class SessionEndedError extends SessionDBError {}

/**
 * The compression lock is missing, held by another live holder, or expired.
 *
 * @example
 * ```ts
 * import { CompressionLockError } from "./errors.ts";
 * import { SessionDB } from "./session_db.ts";
 * const db = SessionDB.open(`${Deno.makeTempDirSync()}/s.db`);
 * db.createSession("s1");
 * const first = db.appendMessage("s1", { role: "user", content: "hello" });
 * db.tryAcquireCompressionLock("s1", `compressor pid=${Deno.pid}`, 60_000);
 * try {
 *   db.rewindToMessage("s1", first);
 * } catch (error) {
 *   console.log(error instanceof CompressionLockError); // true
 * }
 * db.close();
 * ```
 */
export class CompressionLockError extends SessionDBError {}

/**
 * A process completed a handoff whose claim it no longer holds (another process failed
 * the handoff and claimed it anew while this one stalled).
 *
 * @example
 * ```ts
 * import { HandoffOwnershipError } from "./errors.ts";
 * try {
 *   // db.completeHandoff("s1") after losing the claim
 * } catch (error) {
 *   if (error instanceof HandoffOwnershipError) console.error(error.message);
 * }
 * ```
 */
export class HandoffOwnershipError extends SessionDBError {}

/**
 * A compare-and-swap on active message ids failed: the transcript changed underneath.
 *
 * @example
 * ```ts
 * import { RewindConflictError } from "./errors.ts";
 * import { SessionDB } from "./session_db.ts";
 * const db = SessionDB.open(`${Deno.makeTempDirSync()}/s.db`);
 * db.createSession("s1");
 * const first = db.appendMessage("s1", { role: "user", content: "hello" });
 * db.appendMessage("s1", { role: "assistant", content: "hi" }); // appended since the caller looked
 * try {
 *   db.rewindToMessage("s1", first, { expectedActiveIds: [first] });
 * } catch (error) {
 *   console.log(error instanceof RewindConflictError); // true
 * }
 * db.close();
 * ```
 */
export class RewindConflictError extends SessionDBError {}

/**
 * The file or its folder refused an operation after open: read-only, full, corrupt or
 * an I/O error. The transaction was rolled back; what was acknowledged before is intact.
 *
 * @example
 * ```ts
 * import { SessionDBStorageError } from "./errors.ts";
 * import type { SessionDB } from "./session_db.ts";
 * function tryAppend(db: SessionDB, sessionId: string, content: string): number | undefined {
 *   try {
 *     return db.appendMessage(sessionId, { role: "user", content });
 *   } catch (error) {
 *     if (error instanceof SessionDBStorageError) return undefined; // nothing half-written
 *     throw error;
 *   }
 * }
 * ```
 */
export class SessionDBStorageError extends SessionDBError {}

/**
 * The file is corrupt (a damaged page, a foreign header). Once a connection has met the
 * damage it refuses every later write with this error: a write that lands beside a
 * damaged page may never be read back, so acknowledging it would lose it.
 *
 * @example
 * ```ts
 * import { SessionDBCorruptError, SessionDBStorageError } from "./errors.ts";
 * const error = new SessionDBCorruptError("Cannot append message: the file is corrupt");
 * console.log(error instanceof SessionDBStorageError); // true: a storage failure too
 * ```
 */
export class SessionDBCorruptError extends SessionDBStorageError {}

/**
 * The write lock stayed busy past the retry deadline.
 *
 * @example
 * ```ts
 * import { BusyDeadlineError } from "./errors.ts";
 * import { SessionDB } from "./session_db.ts";
 * const db = SessionDB.open(`${Deno.makeTempDirSync()}/s.db`, { busyDeadlineMs: 5_000 });
 * try {
 *   db.createSession("s1");
 * } catch (error) {
 *   if (error instanceof BusyDeadlineError) console.error(`Retry later: ${error.message}`);
 * }
 * db.close();
 * ```
 */
export class BusyDeadlineError extends SessionDBError {}

/**
 * The store was used after `close()`.
 *
 * @example
 * ```ts
 * import { SessionDBClosedError } from "./errors.ts";
 * import { SessionDB } from "./session_db.ts";
 * const db = SessionDB.open(`${Deno.makeTempDirSync()}/s.db`);
 * db.close();
 * try {
 *   db.getSession("s1");
 * } catch (error) {
 *   console.log(error instanceof SessionDBClosedError); // true
 * }
 * ```
 */
export class SessionDBClosedError extends SessionDBError {}

/**
 * `SESSION_DB_CRASH_AT` names no known crash point, or is malformed.
 *
 * @example
 * ```ts
 * import { armedCrashPoint } from "./crash_points.ts";
 * import { CrashPointError } from "./errors.ts";
 * try {
 *   console.log(armedCrashPoint()); // null, or the point SESSION_DB_CRASH_AT names
 * } catch (error) {
 *   if (error instanceof CrashPointError) console.error(error.message); // unknown point or bad "@k"
 * }
 * ```
 */
export class CrashPointError extends SessionDBError {}
