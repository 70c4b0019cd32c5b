import { dirname } from "../internal/path.ts";
import { sha256Hex } from "./_sha256.ts";
import { Database, SqliteError, sqliteVersion, type Statement } from "./sqlite/database.ts";
import { MIGRATIONS, SCHEMA_VERSION } from "./schema.ts";
import { armedCrashPoint, crashPoint } from "./crash_points.ts";
import {
  decideJournalMode,
  DEFAULT_JOURNAL_MODE,
  JOURNAL_MODES,
  type JournalMode,
  journalModeFromEnv,
} from "./journal_mode.ts";
import { processAlive } from "./process.ts";
import {
  BusyDeadlineError,
  CompressionLockError,
  CompressionSessionClosedError,
  InvalidArgumentError,
  RewindConflictError,
  SchemaVersionError,
  SessionDBClosedError,
  SessionDBError,
  SessionDBOpenError,
  SessionDBStorageError,
  SessionEndedError,
  SessionNotFoundError,
} from "./errors.ts";

/**
 * Roles a message may have.
 *
 * @example
 * ```ts
 * import { MESSAGE_ROLES, type MessageRole } from "./session_db.ts";
 * function isRole(value: string): value is MessageRole {
 *   return (MESSAGE_ROLES as readonly string[]).includes(value);
 * }
 * console.log(isRole("tool"), isRole("robot")); // true false
 * ```
 */
export const MESSAGE_ROLES = ["system", "user", "assistant", "tool"] as const;
/**
 * A message role.
 *
 * @example
 * ```ts
 * import type { MessageRole, NewMessage } from "./session_db.ts";
 * function say(role: MessageRole, content: string): NewMessage {
 *   return { role, content };
 * }
 * console.log(say("user", "hello")); // { role: "user", content: "hello" }
 * ```
 */
export type MessageRole = typeof MESSAGE_ROLES[number];
/**
 * Handoff states: `null` → pending → running → completed | failed.
 *
 * @example
 * ```ts
 * import { type HandoffState, SessionDB } from "./session_db.ts";
 * const db = SessionDB.open(`${Deno.makeTempDirSync()}/s.db`);
 * db.createSession("s1");
 * db.requestHandoff("s1", "telegram");
 * const state: HandoffState | null = db.getHandoffState("s1");
 * console.log(state); // "pending"
 * db.close();
 * ```
 */
export type HandoffState = "pending" | "running" | "completed" | "failed";
/**
 * Outbox states.
 *
 * @example
 * ```ts
 * import { type ObligationState, SessionDB } from "./session_db.ts";
 * const db = SessionDB.open(`${Deno.makeTempDirSync()}/s.db`);
 * db.createSession("s1");
 * db.recordObligation({ sessionId: "s1", messageRef: "m1", content: "hello" });
 * const state: ObligationState = "pending";
 * console.log(db.listObligations({ state }).length); // 1
 * db.close();
 * ```
 */
export type ObligationState = "pending" | "attempting" | "delivered" | "failed" | "unknown";

/**
 * The longest session id accepted.
 *
 * @example
 * ```ts
 * import { MAX_SESSION_ID_LENGTH } from "./session_db.ts";
 * const id = `chat-${"x".repeat(300)}`.slice(0, MAX_SESSION_ID_LENGTH); // longer ids are refused
 * console.log(id.length); // 256
 * ```
 */
export const MAX_SESSION_ID_LENGTH = 256;

/**
 * Options of {@linkcode SessionDB.open}.
 *
 * @example
 * ```ts
 * import { SessionDB, type SessionDBOptions } from "./session_db.ts";
 * const options: SessionDBOptions = { journalMode: "delete", busyDeadlineMs: 5_000 };
 * const db = SessionDB.open(`${Deno.makeTempDirSync()}/s.db`, options);
 * console.log(db.journalMode); // "delete"
 * db.close();
 * ```
 */
export interface SessionDBOptions {
  /** `wal` or `delete`; else `SESSION_DB_JOURNAL_MODE`, else `wal` (subject to the WAL-reset gate). */
  journalMode?: JournalMode;
  /** How long one statement waits for a lock inside SQLite (default 1000 ms). */
  busyTimeoutMs?: number;
  /**
   * How long a write keeps retrying a busy lock, jittered, before it fails with
   * `BusyDeadlineError` (default 20 s; 60 s for appends).
   */
  busyDeadlineMs?: number;
  /** Open read-only: no schema changes, no writes. */
  readonly?: boolean;
  /**
   * The registered SQLite VFS to open through; else `SESSION_DB_VFS`, else SQLite's
   * default. The power-loss tier registers `recording` (`recording_vfs.ts`) first.
   */
  vfs?: string;
}

/**
 * A session row.
 *
 * @example
 * ```ts
 * import { type Session, SessionDB } from "./session_db.ts";
 * const db = SessionDB.open(`${Deno.makeTempDirSync()}/s.db`);
 * const session: Session = db.createSession("s1", { title: "Trip plans" });
 * console.log(session.endedAt, session.messageCount); // null 0
 * db.close();
 * ```
 */
export interface Session {
  /** The session id. */
  id: string;
  /** Where the session came from (e.g. `cli`). */
  source: string;
  /** The session this one continues or forks, or `null` for a root. */
  parentSessionId: string | null;
  /** `continuation` (compression rotation), `fork` (branch), or `null` for a root. */
  branchKind: "continuation" | "fork" | null;
  /** When it started, in seconds since the epoch. */
  startedAt: number;
  /** When it ended, in seconds since the epoch, or `null` while open. */
  endedAt: number | null;
  /** Why it ended (e.g. `compression`), or `null` while open. */
  endReason: string | null;
  /** The number of active messages. */
  messageCount: number;
  /** The handoff state, or `null` when never parked. */
  handoffState: HandoffState | null;
  /** Where the handoff goes (e.g. `telegram`), or `null`. */
  handoffPlatform: string | null;
  /** Why the last handoff failed, or `null`. */
  handoffError: string | null;
  /** How many rewinds the session has had. */
  rewindCount: number;
  /** The title, or `null`. */
  title: string | null;
}

/**
 * A message to append.
 *
 * @example
 * ```ts
 * import { type NewMessage, SessionDB } from "./session_db.ts";
 * const db = SessionDB.open(`${Deno.makeTempDirSync()}/s.db`);
 * db.createSession("s1");
 * const result: NewMessage = { role: "tool", content: "42", toolCallId: "c1", toolName: "calc" };
 * console.log(db.appendMessage("s1", result)); // 1
 * db.close();
 * ```
 */
export interface NewMessage {
  /** The role. */
  role: MessageRole;
  /** The text, or `null` (e.g. an assistant turn that only calls tools). */
  content: string | null;
  /** The tool call this message answers (role `tool`). */
  toolCallId?: string | null;
  /** The tool calls made, serialized (e.g. JSON). */
  toolCalls?: string | null;
  /** The tool's name (role `tool`). */
  toolName?: string | null;
}

/**
 * A stored message.
 *
 * @example
 * ```ts
 * import { type Message, SessionDB } from "./session_db.ts";
 * const db = SessionDB.open(`${Deno.makeTempDirSync()}/s.db`);
 * db.createSession("s1");
 * db.appendMessage("s1", { role: "user", content: "hello" });
 * const [first]: Message[] = db.getMessages("s1");
 * console.log(first?.content, first?.active); // "hello" true
 * db.close();
 * ```
 */
export interface Message {
  /** The row id: increasing in append order. */
  id: number;
  /** The session it belongs to. */
  sessionId: string;
  /** The role. */
  role: MessageRole;
  /** The text, or `null`. */
  content: string | null;
  /** The tool call this message answers, or `null`. */
  toolCallId: string | null;
  /** The tool calls made, serialized, or `null`. */
  toolCalls: string | null;
  /** The tool's name, or `null`. */
  toolName: string | null;
  /** When it was appended, in seconds since the epoch. */
  timestamp: number;
  /** `false` once a rewind soft-deleted it. */
  active: boolean;
}

/**
 * Options of {@linkcode SessionDB.createSession}.
 *
 * @example
 * ```ts
 * import { type NewSession, SessionDB } from "./session_db.ts";
 * const db = SessionDB.open(`${Deno.makeTempDirSync()}/s.db`);
 * const options: NewSession = { source: "telegram", title: "Support" };
 * console.log(db.createSession("s1", options).source); // "telegram"
 * db.close();
 * ```
 */
export interface NewSession {
  /** Where the session comes from (default `cli`). */
  source?: string;
  /** The title (default none). */
  title?: string | null;
}

/**
 * A delivery obligation in the outbox.
 *
 * @example
 * ```ts
 * import { type Obligation, SessionDB } from "./session_db.ts";
 * const db = SessionDB.open(`${Deno.makeTempDirSync()}/s.db`);
 * db.createSession("s1");
 * const obligation: Obligation = db.recordObligation({
 *   sessionId: "s1",
 *   messageRef: "m1",
 *   content: "hi",
 * });
 * console.log(obligation.state, obligation.attempts); // "pending" 0
 * db.close();
 * ```
 */
export interface Obligation {
  /** The id, derived from session, message reference and content ({@linkcode obligationId}). */
  obligationId: string;
  /** The session it belongs to. */
  sessionId: string;
  /** What it delivers (e.g. a message id). */
  messageRef: string;
  /** The payload. */
  content: string;
  /** The delivery state. */
  state: ObligationState;
  /** How many send attempts were started. */
  attempts: number;
  /** The compare-and-swap fence, bumped by every attempt. */
  deliveryFence: number;
  /** The pid of the process that owns it, or `null`. */
  ownerPid: number | null;
  /** When it was recorded, in seconds since the epoch. */
  createdAt: number;
  /** When it last changed, in seconds since the epoch. */
  updatedAt: number;
  /** Why it is `failed` or `unknown`, or `null`. */
  lastError: string | null;
}

/**
 * What a recoverer must do with an obligation it took over.
 *
 * @example
 * ```ts
 * import type { RecoveredObligation } from "./session_db.ts";
 * function plan({ action, obligation, idempotencyKey }: RecoveredObligation): string {
 *   if (action === "unknown") return `report ${obligation.obligationId}: ${obligation.lastError}`;
 *   return `${action} "${obligation.content}" with key ${idempotencyKey}`;
 * }
 * ```
 */
export interface RecoveredObligation {
  /** The obligation after the takeover. */
  obligation: Obligation;
  /**
   * `send`: it was never attempted; mark it attempting and send it.
   * `resend`: it may have been sent; send again with `idempotencyKey` only.
   * `unknown`: it may have been sent and cannot be resent safely; it was marked unknown.
   */
  action: "send" | "resend" | "unknown";
  /** The key the transport deduplicates by (the obligation id). */
  idempotencyKey: string;
}

/**
 * Options of {@linkcode SessionDB.sweepRecoverable}.
 *
 * @example
 * ```ts
 * import { SessionDB, type SweepOptions } from "./session_db.ts";
 * const db = SessionDB.open(`${Deno.makeTempDirSync()}/s.db`);
 * const options: SweepOptions = { idempotentTransport: true }; // the transport dedupes by key
 * for (const { action, idempotencyKey } of db.sweepRecoverable(options)) {
 *   console.log(action, idempotencyKey); // resend or send it with this key
 * }
 * db.close();
 * ```
 */
export interface SweepOptions {
  /** Whether the transport deduplicates by idempotency key (default `false`). */
  idempotentTransport?: boolean;
}

/**
 * Options of {@linkcode SessionDB.publishCompressionChild}.
 *
 * @example
 * ```ts
 * import { type CompressionPublish, SessionDB } from "./session_db.ts";
 * const db = SessionDB.open(`${Deno.makeTempDirSync()}/s.db`);
 * db.createSession("s1");
 * const holder = `compressor pid=${Deno.pid}`;
 * db.tryAcquireCompressionLock("s1", holder, 60_000);
 * const summary = [{ role: "system" as const, content: "Summary so far" }];
 * const publish: CompressionPublish = { parentId: "s1", childId: "s2", holder, messages: summary };
 * console.log(db.publishCompressionChild(publish).parentSessionId); // "s1"
 * db.close();
 * ```
 */
export interface CompressionPublish {
  /** The session being rotated (must be open and locked by `holder`). */
  parentId: string;
  /** The continuation's id (must not exist). */
  childId: string;
  /** The holder of the parent's compression lock. */
  holder: string;
  /** The continuation's opening messages (the summary). */
  messages: NewMessage[];
  /** The continuation's title (default the parent's). */
  title?: string | null;
}

type SessionRow = {
  id: string;
  source: string;
  parent_session_id: string | null;
  branch_kind: Session["branchKind"];
  started_at: number;
  ended_at: number | null;
  end_reason: string | null;
  message_count: number;
  handoff_state: HandoffState | null;
  handoff_platform: string | null;
  handoff_error: string | null;
  rewind_count: number;
  title: string | null;
};

type MessageRow = {
  id: number;
  session_id: string;
  role: MessageRole;
  content: string | null;
  tool_call_id: string | null;
  tool_calls: string | null;
  tool_name: string | null;
  timestamp: number;
  active: number;
};

type ObligationRow = {
  obligation_id: string;
  session_id: string;
  message_ref: string;
  content: string;
  state: ObligationState;
  attempts: number;
  delivery_fence: number;
  owner_pid: number | null;
  created_at: number;
  updated_at: number;
  last_error: string | null;
};

const SQLITE_BUSY = 5;
const SQLITE_LOCKED = 6;
/** Result codes of the file, not the caller: read-only, I/O, corrupt, full, can't open, not a database. */
const STORAGE_CODES = new Set([8, 10, 11, 13, 14, 26]);
const sleepCell = new Int32Array(new SharedArrayBuffer(4));

function sleepSync(ms: number): void {
  Atomics.wait(sleepCell, 0, 0, ms);
}

function isBusy(error: unknown): boolean {
  return error instanceof SqliteError &&
    (error.code === SQLITE_BUSY || error.code === SQLITE_LOCKED);
}

function now(): number {
  return Date.now() / 1000;
}

function toSession(row: SessionRow): Session {
  return {
    id: row.id,
    source: row.source,
    parentSessionId: row.parent_session_id,
    branchKind: row.branch_kind,
    startedAt: row.started_at,
    endedAt: row.ended_at,
    endReason: row.end_reason,
    messageCount: row.message_count,
    handoffState: row.handoff_state,
    handoffPlatform: row.handoff_platform,
    handoffError: row.handoff_error,
    rewindCount: row.rewind_count,
    title: row.title,
  };
}

function toMessage(row: MessageRow): Message {
  return {
    id: row.id,
    sessionId: row.session_id,
    role: row.role,
    content: row.content,
    toolCallId: row.tool_call_id,
    toolCalls: row.tool_calls,
    toolName: row.tool_name,
    timestamp: row.timestamp,
    active: row.active === 1,
  };
}

function toObligation(row: ObligationRow): Obligation {
  return {
    obligationId: row.obligation_id,
    sessionId: row.session_id,
    messageRef: row.message_ref,
    content: row.content,
    state: row.state,
    attempts: row.attempts,
    deliveryFence: row.delivery_fence,
    ownerPid: row.owner_pid,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    lastError: row.last_error,
  };
}

function checkSessionId(id: unknown, what = "session id"): string {
  if (typeof id !== "string" || id.length === 0) {
    throw new InvalidArgumentError(`Invalid ${what}: it must be a non-empty string`);
  }
  if (id.length > MAX_SESSION_ID_LENGTH) {
    throw new InvalidArgumentError(
      `Invalid ${what}: ${id.length} characters is over the limit of ${MAX_SESSION_ID_LENGTH}`,
    );
  }
  if (id.includes("\0")) {
    throw new InvalidArgumentError(`Invalid ${what}: it contains a NUL character`);
  }
  checkText(id, what);
  return id;
}

/**
 * Refuses a string UTF-8 cannot store: SQLite's text is UTF-8, so a lone surrogate
 * would be silently replaced by U+FFFD and the stored text would differ from the
 * acknowledged one.
 */
function checkText(value: string | null | undefined, what: string): void {
  if (typeof value !== "string" || value.isWellFormed()) return;
  let at = 0;
  for (; at < value.length; at++) {
    const unit = value.charCodeAt(at);
    const next = value.charCodeAt(at + 1);
    if (unit >= 0xd800 && unit <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) at++;
    else if (unit >= 0xd800 && unit <= 0xdfff) break;
  }
  const unit = value.charCodeAt(at).toString(16).toUpperCase();
  throw new InvalidArgumentError(
    `Invalid ${what}: it contains a lone surrogate (U+${unit} at index ${at}), which UTF-8 cannot store (repair the string, e.g. with toWellFormed(), before writing it)`,
  );
}

function checkMessage(message: NewMessage): void {
  if (!(MESSAGE_ROLES as readonly string[]).includes(message?.role)) {
    throw new InvalidArgumentError(
      `Invalid message role "${message?.role}": use one of ${MESSAGE_ROLES.join(", ")}`,
    );
  }
  if (message.content !== null && typeof message.content !== "string") {
    throw new InvalidArgumentError("Invalid message content: it must be a string or null");
  }
  checkText(message.content, "message content");
  checkText(message.toolCallId, "tool call id");
  checkText(message.toolCalls, "tool calls");
  checkText(message.toolName, "tool name");
}

function pidOfHolder(holder: string): number | undefined {
  const match = /pid=(\d+)/.exec(holder);
  return match ? Number(match[1]) : undefined;
}

/**
 * The obligation id: a hash of session, message reference and content, so that
 * recording the same obligation twice is a no-op.
 *
 * @param sessionId The session.
 * @param messageRef What the obligation delivers (e.g. a message id).
 * @param content The payload.
 * @returns 32 hex characters.
 * @example
 * ```ts
 * import { obligationId } from "./session_db.ts";
 * console.log(obligationId("s1", "m1", "hello").length); // 32
 * ```
 */
export function obligationId(sessionId: string, messageRef: string, content: string): string {
  return sha256Hex(JSON.stringify([sessionId, messageRef, content])).slice(0, 32);
}

const SESSION_COLUMNS =
  "id, source, parent_session_id, branch_kind, started_at, ended_at, end_reason, message_count, handoff_state, handoff_platform, handoff_error, rewind_count, title";
const MESSAGE_COLUMNS =
  "id, session_id, role, content, tool_call_id, tool_calls, tool_name, timestamp, active";

/**
 * The reference session store: sessions and append-only messages in SQLite, a
 * parked-handoff claim, compression rotation, rewind and fork, and a delivery
 * outbox. Every write is one `BEGIN IMMEDIATE` transaction with a bounded, jittered
 * busy retry; a method returns only after COMMIT returned.
 *
 * Synchronous policy, so that acknowledged means durable even across power loss:
 * `synchronous=EXTRA` in DELETE mode (the journal unlink is followed by a directory
 * sync) and `synchronous=FULL` in WAL mode.
 *
 * @example
 * ```ts
 * import { SessionDB } from "./session_db.ts";
 * const dir = Deno.makeTempDirSync();
 * const db = SessionDB.open(`${dir}/sessions.db`);
 * db.createSession("s1");
 * const id = db.appendMessage("s1", { role: "user", content: "hello" });
 * console.log(id, db.getMessages("s1").length); // 1 1
 * db.close();
 * ```
 */
export class SessionDB {
  #db: Database | undefined;
  #path: string;
  #journalMode: JournalMode;
  #journalModeReason: string;
  #busyDeadlineMs: number;
  #appendDeadlineMs: number;
  #readonly: boolean;
  #statements = new Map<string, Statement>();

  private constructor(
    db: Database,
    path: string,
    journalMode: JournalMode,
    reason: string,
    busyDeadlineMs: number,
    appendDeadlineMs: number,
    readonly: boolean,
  ) {
    this.#db = db;
    this.#path = path;
    this.#journalMode = journalMode;
    this.#journalModeReason = reason;
    this.#busyDeadlineMs = busyDeadlineMs;
    this.#appendDeadlineMs = appendDeadlineMs;
    this.#readonly = readonly;
  }

  /**
   * Opens (creating with mode 0600 when missing) a session database, migrates an
   * older schema, and applies the journal-mode resolver.
   *
   * @param path The database file.
   * @param options Journal mode, busy handling, read-only.
   * @returns The open store.
   * @throws {SessionDBOpenError} When the file cannot be used (with the fix).
   * @throws {SchemaVersionError} When the file is from a newer schema (left untouched).
   * @example
   * ```ts
   * import { SessionDB } from "./session_db.ts";
   * const db = SessionDB.open(`${Deno.makeTempDirSync()}/s.db`, { journalMode: "delete" });
   * console.log(db.journalMode); // "delete"
   * db.close();
   * ```
   */
  static open(path: string, options: SessionDBOptions = {}): SessionDB {
    if (typeof path !== "string" || path === "") {
      throw new InvalidArgumentError("Invalid database path: it must be a non-empty string");
    }
    if (options.journalMode !== undefined && !JOURNAL_MODES.includes(options.journalMode)) {
      throw new InvalidArgumentError(
        `Invalid journal mode "${options.journalMode}": use one of ${JOURNAL_MODES.join(", ")}`,
      );
    }
    armedCrashPoint(); // an unknown crash point is an error at open, not silence
    const readonly = options.readonly === true;
    const busyTimeoutMs = options.busyTimeoutMs ?? 1000;
    const busyDeadlineMs = options.busyDeadlineMs ?? 20_000;
    // Appends wait longer by default (an acknowledged append is the store's core promise),
    // but an explicit deadline applies to every write.
    const appendDeadlineMs = options.busyDeadlineMs ?? 60_000;
    const fail = (detail: string, cause?: unknown) =>
      new SessionDBOpenError(`Cannot open session database "${path}": ${detail}`, { cause });

    if (!readonly) createPrivateFile(path, fail);
    let db: Database;
    const vfs = options.vfs ?? vfsFromEnv();
    try {
      db = new Database(path, { readonly, create: !readonly, ...(vfs ? { vfs } : {}) });
    } catch (error) {
      if (vfs && /no such vfs/.test(String(error))) {
        throw fail(
          `no SQLite VFS named "${vfs}" is registered (register it first, e.g. installRecordingVfs() from session_db/recording_vfs.ts, or unset SESSION_DB_VFS)`,
          error,
        );
      }
      throw fail(errorDetail(error), error);
    }
    try {
      db.setBusyTimeout(busyTimeoutMs);
      const version = readSchemaVersion(db, fail);
      if (version > SCHEMA_VERSION) {
        throw new SchemaVersionError(
          `Cannot open session database "${path}": it has schema version ${version}, newer than ${SCHEMA_VERSION} of this store (upgrade the store; the file was left untouched)`,
        );
      }
      if (readonly) {
        if (version < SCHEMA_VERSION) {
          throw fail(
            `schema version ${version} needs a migration to ${SCHEMA_VERSION}, which a read-only open cannot do (open it once writable)`,
          );
        }
        const mode = oneOff(db, "PRAGMA journal_mode", (q) => q.value<[string]>()?.[0]) ??
          "delete";
        db.exec("PRAGMA foreign_keys = ON");
        return new SessionDB(
          db,
          path,
          mode === "wal" ? "wal" : "delete",
          "read-only: as found on disk",
          busyDeadlineMs,
          appendDeadlineMs,
          true,
        );
      }
      const requested = options.journalMode ?? journalModeFromEnv() ?? DEFAULT_JOURNAL_MODE;
      const { mode, reason } = applyJournalMode(db, requested, fail);
      db.exec(`PRAGMA synchronous = ${mode === "wal" ? "FULL" : "EXTRA"}`);
      db.exec("PRAGMA foreign_keys = ON");
      const store = new SessionDB(
        db,
        path,
        mode,
        reason,
        busyDeadlineMs,
        appendDeadlineMs,
        false,
      );
      if (version < SCHEMA_VERSION) store.#migrate();
      return store;
    } catch (error) {
      db.close();
      if (error instanceof SessionDBError) throw error;
      throw fail(errorDetail(error), error);
    }
  }

  /** The database file. */
  get path(): string {
    return this.#path;
  }

  /** The journal mode in effect on this connection. */
  get journalMode(): JournalMode {
    return this.#journalMode;
  }

  /** Why the journal mode is what it is (e.g. the WAL-reset gate). */
  get journalModeReason(): string {
    return this.#journalModeReason;
  }

  /** The SQLite version this store runs on. */
  get sqliteVersion(): string {
    return sqliteVersion();
  }

  /** Whether the store is open. */
  get isOpen(): boolean {
    return this.#db !== undefined;
  }

  // --- sessions -------------------------------------------------------------------

  /**
   * Creates a session; when it exists, keeps its values (only a missing title is filled).
   *
   * @param id The session id (1 to 256 characters).
   * @param options Source and title.
   * @returns The stored session.
   */
  createSession(id: string, options: NewSession = {}): Session {
    checkSessionId(id);
    checkText(options.source, "session source");
    checkText(options.title, "session title");
    this.#write("createSession", () => {
      this.#stmt(
        `INSERT INTO sessions (id, source, started_at, title) VALUES (?, ?, ?, ?)
         ON CONFLICT(id) DO UPDATE SET title = COALESCE(sessions.title, excluded.title)`,
      ).run(id, options.source ?? "cli", now(), options.title ?? null);
    });
    return this.getSession(id)!;
  }

  /**
   * Returns the session, creating it first when missing.
   *
   * @param id The session id.
   * @param options Used only when the session is created.
   * @returns The stored session.
   */
  ensureSession(id: string, options: NewSession = {}): Session {
    return this.getSession(checkSessionId(id)) ?? this.createSession(id, options);
  }

  /**
   * Ends a session; the first reason wins.
   *
   * @param id The session id.
   * @param reason Why it ended (e.g. `user_exit`).
   * @returns `true` when this call ended it, `false` when it had already ended.
   */
  endSession(id: string, reason: string): boolean {
    checkSessionId(id);
    return this.#write("endSession", () => {
      this.#requireSession(id);
      return this.#stmt(
        "UPDATE sessions SET ended_at = ?, end_reason = ? WHERE id = ? AND ended_at IS NULL",
      ).run(now(), reason, id) === 1;
    });
  }

  /**
   * Reopens an ended session. A session rotated by compression is refused when it has
   * a continuation: resume the continuation instead ({@linkcode SessionDB.resolveResumeSessionId}).
   *
   * @param id The session id.
   * @returns `true` when it was ended and is now open.
   */
  reopenSession(id: string): boolean {
    checkSessionId(id);
    return this.#write("reopenSession", () => {
      const session = this.#requireSession(id);
      if (session.end_reason === "compression" && this.#continuationOf(id)) {
        throw new CompressionSessionClosedError(
          `Cannot reopen session "${id}": it was rotated by compression into "${
            this.#continuationOf(id)
          }" (resume that session instead)`,
        );
      }
      return this.#stmt(
        "UPDATE sessions SET ended_at = NULL, end_reason = NULL WHERE id = ? AND ended_at IS NOT NULL",
      ).run(id) === 1;
    });
  }

  /**
   * Reads a session.
   *
   * @param id The session id.
   * @returns The session, or `undefined`.
   */
  getSession(id: string): Session | undefined {
    const row = this.#read(
      "read a session",
      () => this.#stmt(`SELECT ${SESSION_COLUMNS} FROM sessions WHERE id = ?`).get<SessionRow>(id),
    );
    return row ? toSession(row) : undefined;
  }

  /**
   * Lists sessions, oldest first.
   *
   * @param options An optional source filter and limit.
   * @returns The sessions.
   */
  listSessions(options: { source?: string; limit?: number } = {}): Session[] {
    const rows = this.#read("list sessions", () =>
      this.#stmt(
        `SELECT ${SESSION_COLUMNS} FROM sessions WHERE (?1 IS NULL OR source = ?1)
         ORDER BY started_at, id LIMIT ?2`,
      ).all<SessionRow>(options.source ?? null, options.limit ?? -1));
    return rows.map(toSession);
  }

  // --- messages -------------------------------------------------------------------

  /**
   * Appends one message. Returns the row id only after COMMIT returned.
   *
   * @param sessionId An existing session that was not rotated by compression.
   * @param message Role, content and tool fields.
   * @returns The message's row id.
   * @throws {SessionNotFoundError} Unknown session.
   * @throws {InvalidArgumentError} Invalid role or content.
   * @throws {CompressionSessionClosedError} The session was rotated by compression.
   */
  appendMessage(sessionId: string, message: NewMessage): number {
    checkSessionId(sessionId);
    checkMessage(message);
    const id = this.#write("appendMessage", () => {
      this.#requireAppendable(sessionId);
      const rowId = this.#insertMessage(sessionId, message);
      crashPoint("appendMessage:afterInsert");
      this.#stmt("UPDATE sessions SET message_count = message_count + 1 WHERE id = ?").run(
        sessionId,
      );
      crashPoint("appendMessage:afterCount");
      return rowId;
    }, this.#appendDeadlineMs);
    crashPoint("appendMessage:afterCommit");
    return id;
  }

  /**
   * Appends several messages in one transaction: all or none.
   *
   * @param sessionId An existing session that was not rotated by compression.
   * @param messages The messages, in order.
   * @returns Their row ids, in order.
   */
  appendMessages(sessionId: string, messages: NewMessage[]): number[] {
    checkSessionId(sessionId);
    messages.forEach(checkMessage);
    const ids = this.#write("appendMessages", () => {
      this.#requireWritable(sessionId, "append to");
      const out: number[] = [];
      for (const message of messages) {
        out.push(this.#insertMessage(sessionId, message));
        crashPoint("appendMessages:afterInsert");
      }
      this.#stmt("UPDATE sessions SET message_count = message_count + ? WHERE id = ?").run(
        out.length,
        sessionId,
      );
      crashPoint("appendMessages:afterCount");
      return out;
    }, this.#appendDeadlineMs);
    crashPoint("appendMessages:afterCommit");
    return ids;
  }

  /**
   * Reads a session's messages in id order.
   *
   * @param sessionId The session.
   * @param options `includeInactive` to include rewound (soft-deleted) rows.
   * @returns The messages.
   */
  getMessages(sessionId: string, options: { includeInactive?: boolean } = {}): Message[] {
    const sql = options.includeInactive
      ? `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE session_id = ? ORDER BY id`
      : `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE session_id = ? AND active = 1 ORDER BY id`;
    return this.#read("read messages", () => this.#stmt(sql).all<MessageRow>(sessionId))
      .map(toMessage);
  }

  /**
   * Counts a session's active messages.
   *
   * @param sessionId The session.
   * @returns The number of active rows.
   */
  messageCount(sessionId: string): number {
    const row = this.#stmt(
      "SELECT count(*) FROM messages WHERE session_id = ? AND active = 1",
    ).value<[number]>(sessionId);
    return row?.[0] ?? 0;
  }

  // --- handoff --------------------------------------------------------------------

  /**
   * Parks a session for handoff to another process (state `pending`).
   *
   * @param sessionId The session.
   * @param platform Where it is handed (e.g. `telegram`).
   * @returns `true` when parked; `false` when a handoff is already pending or running.
   */
  requestHandoff(sessionId: string, platform: string): boolean {
    checkSessionId(sessionId);
    return this.#write("requestHandoff", () => {
      this.#requireSession(sessionId);
      return this.#stmt(
        `UPDATE sessions SET handoff_state = 'pending', handoff_platform = ?, handoff_error = NULL
         WHERE id = ? AND (handoff_state IS NULL OR handoff_state IN ('completed', 'failed'))`,
      ).run(platform, sessionId) === 1;
    });
  }

  /**
   * Claims a pending handoff with one predicated UPDATE: exactly one of any number of
   * racing claimants wins.
   *
   * @param sessionId The session.
   * @returns `true` for the winner.
   */
  claimHandoff(sessionId: string): boolean {
    checkSessionId(sessionId);
    const won = this.#write("claimHandoff", () => {
      const changed = this.#stmt(
        "UPDATE sessions SET handoff_state = 'running' WHERE id = ? AND handoff_state = 'pending'",
      ).run(sessionId);
      crashPoint("claimHandoff:afterUpdate");
      return changed === 1;
    });
    crashPoint("claimHandoff:afterCommit");
    return won;
  }

  /**
   * Marks a running handoff completed.
   *
   * @param sessionId The session.
   * @returns `true` when it was running.
   */
  completeHandoff(sessionId: string): boolean {
    return this.#write("completeHandoff", () =>
      this.#stmt(
        "UPDATE sessions SET handoff_state = 'completed' WHERE id = ? AND handoff_state = 'running'",
      ).run(sessionId) === 1);
  }

  /**
   * Marks a pending or running handoff failed, with the reason.
   *
   * @param sessionId The session.
   * @param error Why it failed.
   * @returns `true` when it was pending or running.
   */
  failHandoff(sessionId: string, error: string): boolean {
    return this.#write("failHandoff", () =>
      this.#stmt(
        `UPDATE sessions SET handoff_state = 'failed', handoff_error = ?
         WHERE id = ? AND handoff_state IN ('pending', 'running')`,
      ).run(error, sessionId) === 1);
  }

  /**
   * Reads a session's handoff state.
   *
   * @param sessionId The session.
   * @returns The state, or `null` when none (or no such session).
   */
  getHandoffState(sessionId: string): HandoffState | null {
    return this.getSession(sessionId)?.handoffState ?? null;
  }

  /**
   * Lists sessions parked for handoff.
   *
   * @returns Sessions in state `pending`, oldest first.
   */
  listPendingHandoffs(): Session[] {
    return this.#stmt(
      `SELECT ${SESSION_COLUMNS} FROM sessions WHERE handoff_state = 'pending' ORDER BY started_at, id`,
    ).all<SessionRow>().map(toSession);
  }

  // --- compression rotation -------------------------------------------------------

  /**
   * Takes a session's compression lock. A lock held by someone else is taken over only
   * when stale: expired, or its holder names `pid=N` of a dead process.
   *
   * @param sessionId The session to compress.
   * @param holder Who holds it; include `pid=<pid>` so a crashed holder is detected.
   * @param ttlMs How long the lock lasts.
   * @returns `true` when the caller now holds the lock.
   */
  tryAcquireCompressionLock(sessionId: string, holder: string, ttlMs: number): boolean {
    checkSessionId(sessionId);
    return this.#write("tryAcquireCompressionLock", () => {
      this.#requireSession(sessionId);
      const lock = this.#stmt(
        "SELECT holder, expires_at FROM compression_locks WHERE session_id = ?",
      ).get<{ holder: string; expires_at: number }>(sessionId);
      if (lock && lock.holder !== holder && this.#lockLive(lock)) return false;
      const t = now();
      this.#stmt(
        `INSERT INTO compression_locks (session_id, holder, acquired_at, expires_at) VALUES (?, ?, ?, ?)
         ON CONFLICT(session_id) DO UPDATE SET holder = excluded.holder,
           acquired_at = excluded.acquired_at, expires_at = excluded.expires_at`,
      ).run(sessionId, holder, t, t + ttlMs / 1000);
      return true;
    });
  }

  /**
   * Extends a held, unexpired compression lock.
   *
   * @param sessionId The session.
   * @param holder The current holder.
   * @param ttlMs The new lifetime from now.
   * @returns `true` when extended.
   */
  refreshCompressionLock(sessionId: string, holder: string, ttlMs: number): boolean {
    return this.#write("refreshCompressionLock", () => {
      const t = now();
      return this.#stmt(
        `UPDATE compression_locks SET expires_at = ?
         WHERE session_id = ? AND holder = ? AND expires_at > ?`,
      ).run(t + ttlMs / 1000, sessionId, holder, t) === 1;
    });
  }

  /**
   * Releases a compression lock held by `holder`.
   *
   * @param sessionId The session.
   * @param holder The holder.
   * @returns `true` when a lock was released.
   */
  releaseCompressionLock(sessionId: string, holder: string): boolean {
    return this.#write(
      "releaseCompressionLock",
      () =>
        this.#stmt("DELETE FROM compression_locks WHERE session_id = ? AND holder = ?").run(
          sessionId,
          holder,
        ) === 1,
    );
  }

  /**
   * Publishes a compression rotation in one transaction: verifies the lock, creates
   * the continuation child with its handoff messages, and ends the parent with reason
   * `compression`. Visible entirely or not at all.
   *
   * @param publish Parent, child, lock holder and the child's opening messages.
   * @returns The child session.
   * @throws {CompressionLockError} The caller does not hold a live lock.
   * @throws {SessionEndedError} The parent already ended.
   * @throws {InvalidArgumentError} The child id already exists.
   */
  publishCompressionChild(publish: CompressionPublish): Session {
    const { parentId, childId, holder, messages } = publish;
    checkSessionId(parentId, "parent session id");
    checkSessionId(childId, "child session id");
    messages.forEach(checkMessage);
    this.#write("publishCompressionChild", () => {
      const lock = this.#stmt(
        "SELECT holder, expires_at FROM compression_locks WHERE session_id = ?",
      ).get<{ holder: string; expires_at: number }>(parentId);
      if (!lock || lock.holder !== holder || lock.expires_at <= now()) {
        throw new CompressionLockError(
          `Cannot publish compression of "${parentId}": the lock is not held by "${holder}" (${
            lock ? `held by "${lock.holder}", expires ${lock.expires_at}` : "no lock"
          }; acquire it with tryAcquireCompressionLock)`,
        );
      }
      const parent = this.#requireSession(parentId);
      if (parent.ended_at !== null) {
        throw new SessionEndedError(
          `Cannot publish compression of "${parentId}": it already ended (${parent.end_reason})`,
        );
      }
      if (this.getSession(childId)) {
        throw new InvalidArgumentError(
          `Cannot publish compression of "${parentId}" into "${childId}": that session already exists (choose another id)`,
        );
      }
      crashPoint("publishCompressionChild:afterVerify");
      const t = now();
      this.#stmt(
        `INSERT INTO sessions (id, source, parent_session_id, branch_kind, started_at, title)
         VALUES (?, ?, ?, 'continuation', ?, ?)`,
      ).run(childId, parent.source, parentId, t, publish.title ?? parent.title);
      crashPoint("publishCompressionChild:afterChildInsert");
      for (const message of messages) this.#insertMessage(childId, message);
      this.#stmt("UPDATE sessions SET message_count = ? WHERE id = ?").run(
        messages.length,
        childId,
      );
      crashPoint("publishCompressionChild:afterMessages");
      const ended = this.#stmt(
        `UPDATE sessions SET ended_at = ?, end_reason = 'compression'
         WHERE id = ? AND ended_at IS NULL`,
      ).run(t, parentId);
      if (ended !== 1) {
        throw new SessionEndedError(`Cannot publish compression of "${parentId}": it ended`);
      }
      crashPoint("publishCompressionChild:afterParentEnd");
    });
    crashPoint("publishCompressionChild:afterCommit");
    return this.getSession(childId)!;
  }

  /**
   * Finds the open continuation of a rotated session.
   *
   * @param parentId The rotated session.
   * @returns The newest open continuation child, or `undefined`.
   */
  findLiveCompressionChild(parentId: string): Session | undefined {
    const row = this.#stmt(
      `SELECT ${SESSION_COLUMNS} FROM sessions
       WHERE parent_session_id = ? AND branch_kind = 'continuation' AND ended_at IS NULL
       ORDER BY started_at DESC, id DESC LIMIT 1`,
    ).get<SessionRow>(parentId);
    return row ? toSession(row) : undefined;
  }

  /**
   * Reopens a session left ended by `compression` without a continuation (a legacy
   * orphan), only when it has no child and no live compression lock.
   *
   * @param sessionId The session.
   * @returns `true` when it was reopened.
   */
  reopenOrphanedCompressionSession(sessionId: string): boolean {
    checkSessionId(sessionId);
    return this.#write("reopenOrphanedCompressionSession", () => {
      const session = this.#requireSession(sessionId);
      if (session.end_reason !== "compression") return false;
      const child = this.#stmt("SELECT 1 FROM sessions WHERE parent_session_id = ? LIMIT 1")
        .value(sessionId);
      if (child) return false;
      const lock = this.#stmt(
        "SELECT holder, expires_at FROM compression_locks WHERE session_id = ?",
      ).get<{ holder: string; expires_at: number }>(sessionId);
      if (lock && this.#lockLive(lock)) return false;
      return this.#stmt(
        `UPDATE sessions SET ended_at = NULL, end_reason = NULL
         WHERE id = ? AND end_reason = 'compression'`,
      ).run(sessionId) === 1;
    });
  }

  /**
   * Follows compression rotations from a session to the tip of its chain.
   *
   * @param sessionId Where to start.
   * @returns The id to resume (the session itself when it was not rotated).
   */
  resolveResumeSessionId(sessionId: string): string {
    let current = sessionId;
    const seen = new Set<string>();
    while (!seen.has(current)) {
      seen.add(current);
      const session = this.getSession(current);
      if (!session || session.endReason !== "compression") return current;
      const next = this.#continuationOf(current);
      if (!next) return current;
      current = next;
    }
    return current;
  }

  // --- rewind and fork ------------------------------------------------------------

  /**
   * Rewinds a transcript to before a user message: soft-deletes that message and every
   * later active row in one transaction, guarded by an optional compare-and-swap on
   * the active ids. Rows are never copied, so repeated rewinds never duplicate.
   *
   * @param sessionId The session.
   * @param targetId A user message of that session.
   * @param options `expectedActiveIds`: the active ids the caller saw, in order.
   * @returns How many rows were deactivated.
   * @throws {RewindConflictError} The active ids differ from `expectedActiveIds`.
   * @throws {CompressionLockError} A compression of the session is in progress.
   */
  rewindToMessage(
    sessionId: string,
    targetId: number,
    options: { expectedActiveIds?: readonly number[] } = {},
  ): number {
    checkSessionId(sessionId);
    const deactivated = this.#write("rewindToMessage", () => {
      this.#requireWritable(sessionId, "rewind");
      const target = this.#stmt(
        "SELECT role, active FROM messages WHERE id = ? AND session_id = ?",
      ).get<{ role: string; active: number }>(targetId, sessionId);
      if (!target || target.role !== "user" || target.active !== 1) {
        throw new InvalidArgumentError(
          `Cannot rewind session "${sessionId}" to message ${targetId}: it is not an active user message of that session`,
        );
      }
      const lock = this.#stmt(
        "SELECT holder, expires_at FROM compression_locks WHERE session_id = ?",
      ).get<{ holder: string; expires_at: number }>(sessionId);
      if (lock && this.#lockLive(lock)) {
        throw new CompressionLockError(
          `Cannot rewind session "${sessionId}": a compression holds its lock ("${lock.holder}"); retry after it finishes`,
        );
      }
      if (options.expectedActiveIds) {
        const active = this.#activeIds(sessionId);
        const expected = options.expectedActiveIds;
        if (active.length !== expected.length || active.some((id, i) => id !== expected[i])) {
          throw new RewindConflictError(
            `Cannot rewind session "${sessionId}": its active messages changed (expected ${expected.length} ids ending ${
              expected.at(-1) ?? "none"
            }, found ${active.length} ending ${
              active.at(-1) ?? "none"
            }); reload the transcript and retry`,
          );
        }
      }
      crashPoint("rewindToMessage:afterVerify");
      const changed = this.#stmt(
        "UPDATE messages SET active = 0 WHERE session_id = ? AND id >= ? AND active = 1",
      ).run(sessionId, targetId);
      crashPoint("rewindToMessage:afterDeactivate");
      this.#stmt(
        `UPDATE sessions SET message_count = message_count - ?, rewind_count = rewind_count + 1
         WHERE id = ?`,
      ).run(changed, sessionId);
      crashPoint("rewindToMessage:afterCount");
      return changed;
    });
    crashPoint("rewindToMessage:afterCommit");
    return deactivated;
  }

  /**
   * Forks a branch: a new session holding copies of the active messages up to and
   * including `atMessageId`. The parent is left untouched.
   *
   * @param sessionId The session to fork.
   * @param atMessageId The last active message the branch keeps.
   * @param newId The branch's id (must not exist).
   * @returns The branch session.
   */
  forkSession(sessionId: string, atMessageId: number, newId: string): Session {
    checkSessionId(sessionId);
    checkSessionId(newId, "branch session id");
    this.#write("forkSession", () => {
      const parent = this.#requireSession(sessionId);
      const at = this.#stmt(
        "SELECT 1 FROM messages WHERE id = ? AND session_id = ? AND active = 1",
      ).value(atMessageId, sessionId);
      if (!at) {
        throw new InvalidArgumentError(
          `Cannot fork session "${sessionId}" at message ${atMessageId}: it is not an active message of that session`,
        );
      }
      if (this.getSession(newId)) {
        throw new InvalidArgumentError(
          `Cannot fork session "${sessionId}" into "${newId}": that session already exists (choose another id)`,
        );
      }
      this.#stmt(
        `INSERT INTO sessions (id, source, parent_session_id, branch_kind, started_at, title)
         VALUES (?, ?, ?, 'fork', ?, ?)`,
      ).run(newId, parent.source, sessionId, now(), parent.title);
      crashPoint("forkSession:afterCreate");
      const copied = this.#stmt(
        `INSERT INTO messages (session_id, role, content, tool_call_id, tool_calls, tool_name, timestamp)
         SELECT ?, role, content, tool_call_id, tool_calls, tool_name, timestamp FROM messages
         WHERE session_id = ? AND active = 1 AND id <= ? ORDER BY id`,
      ).run(newId, sessionId, atMessageId);
      crashPoint("forkSession:afterCopy");
      this.#stmt("UPDATE sessions SET message_count = ? WHERE id = ?").run(copied, newId);
      crashPoint("forkSession:afterCount");
    });
    crashPoint("forkSession:afterCommit");
    return this.getSession(newId)!;
  }

  // --- delivery outbox ------------------------------------------------------------

  /**
   * Records a delivery obligation (state `pending`, owned by this process). Its id is
   * derived from session, message reference and content: recording twice is a no-op.
   *
   * @param obligation Session, message reference and payload.
   * @returns The stored obligation.
   */
  recordObligation(
    obligation: { sessionId: string; messageRef: string; content: string },
  ): Obligation {
    const { sessionId, messageRef, content } = obligation;
    checkSessionId(sessionId);
    checkText(messageRef, "message reference");
    checkText(content, "obligation content");
    const id = obligationId(sessionId, messageRef, content);
    this.#write("recordObligation", () => {
      this.#requireSession(sessionId);
      const t = now();
      this.#stmt(
        `INSERT OR IGNORE INTO outbox (obligation_id, session_id, message_ref, content, state,
           owner_pid, created_at, updated_at) VALUES (?, ?, ?, ?, 'pending', ?, ?, ?)`,
      ).run(id, sessionId, messageRef, content, Deno.pid, t, t);
      crashPoint("recordObligation:afterInsert");
    });
    crashPoint("recordObligation:afterCommit");
    return this.getObligation(id)!;
  }

  /**
   * Moves a pending obligation to `attempting` (compare-and-swap on state and fence)
   * and takes ownership; call it before sending.
   *
   * @param id The obligation id.
   * @param expectedFence The fence the caller read.
   * @returns The new fence, or `null` when the CAS lost.
   */
  markAttempting(id: string, expectedFence: number): number | null {
    const fence = this.#write("markAttempting", () => {
      const changed = this.#stmt(
        `UPDATE outbox SET state = 'attempting', attempts = attempts + 1,
           delivery_fence = delivery_fence + 1, owner_pid = ?, updated_at = ?
         WHERE obligation_id = ? AND state = 'pending' AND delivery_fence = ?`,
      ).run(Deno.pid, now(), id, expectedFence);
      crashPoint("markAttempting:afterUpdate");
      return changed === 1 ? expectedFence + 1 : null;
    });
    crashPoint("markAttempting:afterCommit");
    return fence;
  }

  /**
   * Marks an attempting obligation delivered (CAS on state and fence).
   *
   * @param id The obligation id.
   * @param fence The fence returned by the attempt.
   * @returns `true` when this call marked it.
   */
  markDelivered(id: string, fence: number): boolean {
    const done = this.#write("markDelivered", () => {
      const changed = this.#stmt(
        `UPDATE outbox SET state = 'delivered', updated_at = ?, last_error = NULL
         WHERE obligation_id = ? AND state = 'attempting' AND delivery_fence = ?`,
      ).run(now(), id, fence);
      crashPoint("markDelivered:afterUpdate");
      return changed === 1;
    });
    crashPoint("markDelivered:afterCommit");
    return done;
  }

  /**
   * Marks an open obligation failed, with the reason (CAS on fence).
   *
   * @param id The obligation id.
   * @param fence The fence the caller holds.
   * @param reason Why it failed.
   * @returns `true` when this call marked it.
   */
  markFailed(id: string, fence: number, reason: string): boolean {
    const done = this.#terminal("failed", id, fence, reason);
    crashPoint("markFailed:afterCommit");
    return done;
  }

  /**
   * Marks an open obligation unknown: it may or may not have been delivered.
   *
   * @param id The obligation id.
   * @param fence The fence the caller holds.
   * @param reason Why the outcome is unknown.
   * @returns `true` when this call marked it.
   */
  markUnknown(id: string, fence: number, reason: string): boolean {
    const done = this.#terminal("unknown", id, fence, reason);
    crashPoint("markUnknown:afterCommit");
    return done;
  }

  /**
   * Takes over the open obligations of dead processes, in one transaction so that
   * concurrent recoverers never take the same one. A `pending` one is returned to send;
   * an `attempting` one may already have been sent, so it is returned to resend only
   * when the transport deduplicates by idempotency key, and otherwise marked `unknown`.
   *
   * @param options Whether the transport is idempotent.
   * @returns What this recoverer now owns, and what to do with each.
   */
  sweepRecoverable(options: SweepOptions = {}): RecoveredObligation[] {
    const taken = this.#write("sweepRecoverable", () => {
      const rows = this.#stmt(
        `SELECT obligation_id, state, delivery_fence, owner_pid FROM outbox
         WHERE state IN ('pending', 'attempting') ORDER BY created_at, obligation_id`,
      ).all<{ obligation_id: string; state: string; delivery_fence: number; owner_pid: number }>();
      const out: { id: string; action: RecoveredObligation["action"] }[] = [];
      const t = now();
      for (const row of rows) {
        if (row.owner_pid === Deno.pid || processAlive(row.owner_pid)) continue;
        if (row.state === "pending") {
          this.#stmt(
            `UPDATE outbox SET owner_pid = ?, updated_at = ?
             WHERE obligation_id = ? AND state = 'pending' AND delivery_fence = ?`,
          ).run(Deno.pid, t, row.obligation_id, row.delivery_fence);
          out.push({ id: row.obligation_id, action: "send" });
        } else if (options.idempotentTransport) {
          this.#stmt(
            `UPDATE outbox SET owner_pid = ?, updated_at = ?, attempts = attempts + 1,
               delivery_fence = delivery_fence + 1
             WHERE obligation_id = ? AND state = 'attempting' AND delivery_fence = ?`,
          ).run(Deno.pid, t, row.obligation_id, row.delivery_fence);
          out.push({ id: row.obligation_id, action: "resend" });
        } else {
          this.#stmt(
            `UPDATE outbox SET state = 'unknown', owner_pid = ?, updated_at = ?, last_error = ?
             WHERE obligation_id = ? AND state = 'attempting' AND delivery_fence = ?`,
          ).run(
            Deno.pid,
            t,
            `owner pid ${row.owner_pid} died after marking it attempting; it may have been sent and the transport has no idempotency key, so it is not resent`,
            row.obligation_id,
            row.delivery_fence,
          );
          out.push({ id: row.obligation_id, action: "unknown" });
        }
        crashPoint("sweepRecoverable:afterClaim");
      }
      return out;
    });
    crashPoint("sweepRecoverable:afterCommit");
    return taken.map(({ id, action }) => ({
      obligation: this.getObligation(id)!,
      action,
      idempotencyKey: id,
    }));
  }

  /**
   * Reads one obligation.
   *
   * @param id The obligation id.
   * @returns The obligation, or `undefined`.
   */
  getObligation(id: string): Obligation | undefined {
    const row = this.#read(
      "read an obligation",
      () => this.#stmt("SELECT * FROM outbox WHERE obligation_id = ?").get<ObligationRow>(id),
    );
    return row ? toObligation(row) : undefined;
  }

  /**
   * Lists obligations, oldest first.
   *
   * @param filter Optional session and state.
   * @returns The obligations.
   */
  listObligations(filter: { sessionId?: string; state?: ObligationState } = {}): Obligation[] {
    return this.#read("list obligations", () =>
      this.#stmt(
        `SELECT * FROM outbox WHERE (?1 IS NULL OR session_id = ?1) AND (?2 IS NULL OR state = ?2)
         ORDER BY created_at, obligation_id`,
      ).all<ObligationRow>(filter.sessionId ?? null, filter.state ?? null)).map(toObligation);
  }

  // --- invariants and lifecycle ---------------------------------------------------

  /**
   * Checks the store's invariants: integrity and foreign keys, counters against rows,
   * no compression orphan, at most one live continuation per parent, states within
   * their enumerations, ended sessions with a reason.
   *
   * @returns One line per violation; empty when all hold.
   */
  checkInvariants(): string[] {
    const db = this.#open();
    const problems: string[] = [];
    const integrity = oneOff(db, "PRAGMA integrity_check", (q) => q.values<[string]>());
    if (integrity.length !== 1 || integrity[0]?.[0] !== "ok") {
      problems.push(`integrity_check: ${integrity.map((r) => r[0]).join("; ")}`);
    }
    const fk = oneOff(db, "PRAGMA foreign_key_check", (q) => q.values());
    if (fk.length) {
      problems.push(
        `foreign_key_check: ${fk.length} violation(s): ${JSON.stringify(fk.slice(0, 5))}`,
      );
    }
    const checks: [string, string][] = [
      [
        "message_count differs from active rows",
        `SELECT s.id || ' (' || s.message_count || ' vs ' || (SELECT count(*) FROM messages m WHERE m.session_id = s.id AND m.active = 1) || ')'
         FROM sessions s WHERE s.message_count != (SELECT count(*) FROM messages m WHERE m.session_id = s.id AND m.active = 1)`,
      ],
      [
        "compression orphan (ended by compression, no continuation)",
        `SELECT p.id FROM sessions p WHERE p.end_reason = 'compression' AND NOT EXISTS
         (SELECT 1 FROM sessions c WHERE c.parent_session_id = p.id AND c.branch_kind = 'continuation')`,
      ],
      [
        "more than one live continuation",
        `SELECT parent_session_id FROM sessions WHERE branch_kind = 'continuation' AND ended_at IS NULL
         GROUP BY parent_session_id HAVING count(*) > 1`,
      ],
      [
        "invalid handoff state",
        `SELECT id || ': ' || handoff_state FROM sessions
         WHERE handoff_state IS NOT NULL AND handoff_state NOT IN ('pending', 'running', 'completed', 'failed')`,
      ],
      [
        "ended without a reason, or a reason without an end",
        "SELECT id FROM sessions WHERE (ended_at IS NULL) != (end_reason IS NULL)",
      ],
      [
        "invalid branch kind",
        `SELECT id FROM sessions WHERE (branch_kind IS NOT NULL AND branch_kind NOT IN ('continuation', 'fork'))
         OR ((branch_kind IS NULL) != (parent_session_id IS NULL))`,
      ],
      [
        "invalid message role or active flag",
        `SELECT id FROM messages WHERE role NOT IN ('system', 'user', 'assistant', 'tool') OR active NOT IN (0, 1)`,
      ],
      [
        "invalid obligation state",
        `SELECT obligation_id || ': ' || state FROM outbox
         WHERE state NOT IN ('pending', 'attempting', 'delivered', 'failed', 'unknown')
         OR (state IN ('failed', 'unknown') AND last_error IS NULL) OR delivery_fence < 0`,
      ],
    ];
    for (const [what, sql] of checks) {
      const rows = oneOff(db, sql, (q) => q.values<[string]>());
      if (rows.length) {
        problems.push(`${what}: ${rows.slice(0, 10).map((r) => r[0]).join(", ")}`);
      }
    }
    return problems;
  }

  /**
   * Closes the store (a passive checkpoint first in WAL mode). Idempotent; any later
   * call fails with {@linkcode SessionDBClosedError}.
   */
  close(): void {
    const db = this.#db;
    if (!db) return;
    this.#db = undefined;
    this.#statements.clear();
    try {
      if (this.#journalMode === "wal" && !this.#readonly) {
        db.exec("PRAGMA wal_checkpoint(PASSIVE)");
      }
    } catch {
      // A busy checkpoint is harmless: the next connection checkpoints.
    } finally {
      db.close();
    }
  }

  /** Closes the store at the end of a `using` block. */
  [Symbol.dispose](): void {
    this.close();
  }

  // --- internals ------------------------------------------------------------------

  #open(): Database {
    if (!this.#db) {
      throw new SessionDBClosedError(
        `Cannot use session database "${this.#path}": it was closed (open it again)`,
      );
    }
    return this.#db;
  }

  #stmt(sql: string): Statement {
    let statement = this.#statements.get(sql);
    if (!statement) {
      statement = this.#open().prepare(sql);
      this.#statements.set(sql, statement);
    }
    return statement;
  }

  #write<T>(operation: string, fn: () => T, deadlineMs = this.#busyDeadlineMs): T {
    const db = this.#open();
    if (this.#readonly) {
      throw new SessionDBError(
        `Cannot ${operation} on session database "${this.#path}": it was opened read-only`,
      );
    }
    const started = performance.now();
    for (let attempt = 0;; attempt++) {
      try {
        this.#stmt("BEGIN IMMEDIATE").run();
        try {
          const result = fn();
          this.#stmt("COMMIT").run();
          return result;
        } catch (error) {
          if (db.inTransaction) this.#stmt("ROLLBACK").run();
          throw error;
        }
      } catch (error) {
        if (!isBusy(error)) throw this.#storageError(operation, error);
        const waited = performance.now() - started;
        if (waited >= deadlineMs) {
          throw new BusyDeadlineError(
            `Cannot ${operation} on session database "${this.#path}": the database stayed locked for ${
              Math.round(waited)
            } ms (${
              attempt + 1
            } attempts, deadline ${deadlineMs} ms): another connection holds the write lock (retry later, find the process that keeps a transaction open, or raise busyDeadlineMs)`,
            { cause: error },
          );
        }
        const jitter = waited < 2000 ? 20 + Math.random() * 130 : 250 + Math.random() * 750;
        sleepSync(Math.min(jitter, Math.max(1, deadlineMs - waited)));
      }
    }
  }

  /** Names a storage failure (read-only, full, corrupt, I/O) with its fix; else `error`. */
  #storageError(operation: string, error: unknown, wrote = true): unknown {
    if (!(error instanceof SqliteError) || !STORAGE_CODES.has(error.code)) return error;
    return new SessionDBStorageError(
      `Cannot ${operation} on session database "${this.#path}": ${errorDetail(error)}${
        wrote ? "; the transaction was rolled back" : ""
      }`,
      { cause: error },
    );
  }

  /** Runs a read, naming a storage failure (corrupt page, I/O error) with its fix. */
  #read<T>(operation: string, fn: () => T): T {
    try {
      return fn();
    } catch (error) {
      throw this.#storageError(operation, error, false);
    }
  }

  #migrate(): void {
    const db = this.#open();
    this.#write("migrate", () => {
      // Re-read inside the write lock: a concurrent opener may have migrated already.
      const version = currentVersion(db);
      if (version > SCHEMA_VERSION) {
        throw new SchemaVersionError(
          `Cannot open session database "${this.#path}": it has schema version ${version}, newer than ${SCHEMA_VERSION}`,
        );
      }
      for (let v = version; v < SCHEMA_VERSION; v++) db.exec(MIGRATIONS[v]!);
      if (version === 0) db.exec("INSERT INTO schema_version (version) VALUES (0)");
      db.exec(`UPDATE schema_version SET version = ${SCHEMA_VERSION}`);
    });
  }

  #requireSession(id: string): SessionRow {
    const row = this.#stmt(`SELECT ${SESSION_COLUMNS} FROM sessions WHERE id = ?`).get<
      SessionRow
    >(id);
    if (!row) {
      throw new SessionNotFoundError(
        `Unknown session "${id}": create it first with createSession`,
      );
    }
    return row;
  }

  /** #requireWritable for the append hot path: reads one column, not thirteen. */
  #requireAppendable(id: string): void {
    const row = this.#stmt("SELECT end_reason FROM sessions WHERE id = ?").value<[string | null]>(
      id,
    );
    if (!row) this.#requireSession(id); // throws SessionNotFoundError
    else if (row[0] === "compression") this.#requireWritable(id, "append to"); // throws
  }

  #requireWritable(id: string, action: string): SessionRow {
    const row = this.#requireSession(id);
    if (row.end_reason === "compression") {
      const next = this.#continuationOf(id);
      throw new CompressionSessionClosedError(
        `Cannot ${action} session "${id}": it was rotated by compression${
          next ? ` into "${next}"` : ""
        } (write to resolveResumeSessionId("${id}") instead)`,
      );
    }
    return row;
  }

  #continuationOf(id: string): string | undefined {
    const row = this.#stmt(
      `SELECT id FROM sessions WHERE parent_session_id = ? AND branch_kind = 'continuation'
       ORDER BY started_at DESC, id DESC LIMIT 1`,
    ).value<[string]>(id);
    return row?.[0];
  }

  #insertMessage(sessionId: string, message: NewMessage): number {
    this.#stmt(
      `INSERT INTO messages (session_id, role, content, tool_call_id, tool_calls, tool_name, timestamp)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      sessionId,
      message.role,
      message.content,
      message.toolCallId ?? null,
      message.toolCalls ?? null,
      message.toolName ?? null,
      now(),
    );
    return Number(this.#open().lastInsertRowId);
  }

  #activeIds(sessionId: string): number[] {
    return this.#stmt(
      "SELECT id FROM messages WHERE session_id = ? AND active = 1 ORDER BY id",
    ).values<[number]>(sessionId).map((r) => r[0]);
  }

  #lockLive(lock: { holder: string; expires_at: number }): boolean {
    if (lock.expires_at <= now()) return false;
    const pid = pidOfHolder(lock.holder);
    return pid === undefined || processAlive(pid);
  }

  #terminal(state: "failed" | "unknown", id: string, fence: number, reason: string): boolean {
    return this.#write(state === "failed" ? "markFailed" : "markUnknown", () =>
      this.#stmt(
        `UPDATE outbox SET state = ?, last_error = ?, updated_at = ?
         WHERE obligation_id = ? AND state IN ('pending', 'attempting') AND delivery_fence = ?`,
      ).run(state, reason, now(), id, fence) === 1);
  }
}

/** Runs a one-off query and finalizes its statement. */
function oneOff<T>(db: Database, sql: string, read: (statement: Statement) => T): T {
  using statement = db.prepare(sql);
  return read(statement);
}

function errorDetail(error: unknown): string {
  if (error instanceof SqliteError) {
    const base = error.message.replace(/^Cannot open database "[^"]*": /, "");
    if (error.code === 26) return `${base} (restore it from a backup or choose another path)`;
    if (error.code === 11) return `${base} (the file is corrupt: restore it from a backup)`;
    if (error.code === 14) {
      return `${base} (check that the folder exists and is writable, and the file readable)`;
    }
    if (error.code === 8) {
      return `${base} (the file or its folder is read-only: make both writable, or open with { readonly: true })`;
    }
    if (error.code === 10) return `${base} (an I/O error: check the disk and the file system)`;
    if (error.code === 13) return `${base} (the disk is full: free some space and retry)`;
    return base;
  }
  return error instanceof Error ? error.message : String(error);
}

/** `SESSION_DB_VFS`: a registered VFS to open through (unset: SQLite's default). */
function vfsFromEnv(): string | undefined {
  try {
    return Deno.env.get("SESSION_DB_VFS") || undefined;
  } catch {
    return undefined; // without env permission the variable is treated as unset
  }
}

function createPrivateFile(path: string, fail: (detail: string) => Error): void {
  const dir = dirname(path);
  try {
    if (!Deno.statSync(dir).isDirectory) {
      throw fail(`"${dir}" is not a directory (choose a path inside an existing folder)`);
    }
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) {
      throw fail(`the folder "${dir}" does not exist (create it first)`);
    }
    if (error instanceof SessionDBError) throw error;
    // Without permission to stat the folder, let SQLite report what it can.
    return;
  }
  try {
    Deno.openSync(path, { createNew: true, write: true, mode: 0o600 }).close();
    Deno.chmodSync(path, 0o600);
    syncFolder(dir);
  } catch (error) {
    if (error instanceof Deno.errors.AlreadyExists) return;
    if (error instanceof Deno.errors.PermissionDenied) {
      throw fail(`the folder "${dir}" is not writable (choose a writable location)`);
    }
    // Other failures surface from SQLite's own open with its message.
  }
}

// A new file's name is durable only once its folder is synced: without this a power
// loss right after the first commit could lose the whole database file.
function syncFolder(dir: string): void {
  try {
    const folder = Deno.openSync(dir, { read: true });
    try {
      folder.syncSync();
    } finally {
      folder.close();
    }
  } catch {
    // Some platforms cannot open or sync a folder; SQLite's own journal syncs still hold.
  }
}

function currentVersion(db: Database): number {
  const table = oneOff(
    db,
    "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'",
    (q) => q.value(),
  );
  if (!table) return 0;
  return Number(
    oneOff(db, "SELECT max(version) FROM schema_version", (q) => q.value<[number]>()?.[0]) ?? 0,
  );
}

function readSchemaVersion(db: Database, fail: (detail: string, cause?: unknown) => Error): number {
  try {
    return currentVersion(db);
  } catch (error) {
    throw fail(errorDetail(error), error);
  }
}

function applyJournalMode(
  db: Database,
  requested: JournalMode,
  fail: (detail: string) => Error,
): { mode: JournalMode; reason: string } {
  const onDisk = String(
    oneOff(db, "PRAGMA journal_mode", (q) => q.value<[string]>()?.[0]) ?? "delete",
  )
    .toLowerCase();
  const decision = decideJournalMode(requested, sqliteVersion(), onDisk);
  if (onDisk !== decision.mode) {
    let result: string;
    try {
      using statement = db.prepare(`PRAGMA journal_mode = ${decision.mode.toUpperCase()}`);
      result = String(statement.value<[string]>()?.[0]).toLowerCase();
    } catch (error) {
      if (!isBusy(error)) throw error;
      result = `${onDisk} (the database is locked)`;
    }
    if (result !== decision.mode) {
      throw fail(
        `journal mode ${decision.mode} was requested but SQLite kept ${result} (another connection may have the file open in WAL mode: close it and retry)`,
      );
    }
  }
  return { mode: decision.mode, reason: decision.reason };
}
