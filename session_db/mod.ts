/**
 * The reference session store (`SessionDB`) over SQLite through FFI: sessions and
 * append-only messages, a parked-handoff claim, compression rotation, rewind and
 * fork, a delivery outbox, the journal-mode resolver and named crash points.
 *
 * @example
 * ```ts
 * import { SessionDB } from "./mod.ts";
 * const db = SessionDB.open(`${Deno.makeTempDirSync()}/sessions.db`);
 * db.createSession("s1");
 * db.appendMessage("s1", { role: "user", content: "hello" });
 * console.log(db.getMessages("s1").map((m) => m.content)); // ["hello"]
 * db.close();
 * ```
 *
 * @module
 */
export { SessionDB } from "./session_db.ts";
export {
  type CompressionPublish,
  type HandoffState,
  MAX_SESSION_ID_LENGTH,
  type Message,
  MESSAGE_ROLES,
  type MessageRole,
  type NewMessage,
  type NewSession,
  type Obligation,
  type ObligationState,
  type RecoveredObligation,
  type Session,
  type SessionDBOptions,
  type SweepOptions,
} from "./types.ts";
export { obligationId } from "./obligation_id.ts";
export {
  DEFAULT_RECOVERY_MARKER,
  DELIVERY_POLICIES,
  type DeliveryPolicy,
} from "./delivery_policy.ts";
export {
  BusyDeadlineError,
  CompressionLockError,
  CompressionSessionClosedError,
  CrashPointError,
  HandoffOwnershipError,
  InvalidArgumentError,
  RewindConflictError,
  SchemaVersionError,
  SessionDBClosedError,
  SessionDBCorruptError,
  SessionDBError,
  SessionDBOpenError,
  SessionDBStorageError,
  SessionEndedError,
  SessionNotFoundError,
} from "./errors.ts";
export {
  decideJournalMode,
  DEFAULT_JOURNAL_MODE,
  isWalResetVulnerable,
  JOURNAL_MODES,
  type JournalMode,
  type JournalModeDecision,
  journalModeFromEnv,
  onDiskJournalMode,
} from "./journal_mode.ts";
export {
  armedCrashPoint,
  crashPoint,
  type CrashPointName,
  crashPoints,
  defineCrashPoints,
  STORE_CRASH_POINTS,
} from "./crash_points.ts";
export { STORE_SCHEMA_VERSION } from "./schema.ts";
// The binding's API; its result codes (sqlite/constants.ts) stay in sqlite/mod.ts.
export {
  Database,
  type DatabaseOptions,
  sqliteLibraryPath,
  sqliteVersion,
  type TransactionFunction,
} from "./sqlite/database.ts";
export {
  type BindParameters,
  type BindValue,
  type Row,
  type SqliteValue,
  Statement,
  type StatementParameters,
} from "./sqlite/statement.ts";
export { SqliteError } from "./sqlite/sqlite_error.ts";
export { SqliteLibraryError, systemLibraryPath } from "./sqlite/library.ts";
