// The store's public types: what SessionDB takes and returns.
import type { JournalMode } from "./journal_mode.ts";

/**
 * Roles a message may have.
 *
 * @example
 * ```ts
 * import { MESSAGE_ROLES, type MessageRole } from "./types.ts";
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
 * import type { MessageRole, NewMessage } from "./types.ts";
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
 * import { SessionDB } from "./session_db.ts";
 * import type { HandoffState } from "./types.ts";
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
 * import { SessionDB } from "./session_db.ts";
 * import type { ObligationState } from "./types.ts";
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
 * import { MAX_SESSION_ID_LENGTH } from "./types.ts";
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
 * import { SessionDB } from "./session_db.ts";
 * import type { SessionDBOptions } from "./types.ts";
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
   * The registered SQLite VFS to open through (default: SQLite's default VFS).
   */
  vfs?: string;
  /**
   * What a recovery sweep does with an obligation that may have been sent, on a transport
   * that does not deduplicate: `at-most-once` (the default) settles it `unknown` and never
   * resends it; `marked-at-least-once` resends it with {@linkcode recoveryMarker}
   * (see `DeliveryPolicy`).
   */
  deliveryPolicy?: "at-most-once" | "marked-at-least-once";
  /** The marker of a resend under `marked-at-least-once` (default `"[resent after a restart] "`). */
  recoveryMarker?: string;
}

/**
 * A session row.
 *
 * @example
 * ```ts
 * import { SessionDB } from "./session_db.ts";
 * import type { Session } from "./types.ts";
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
 * import { SessionDB } from "./session_db.ts";
 * import type { NewMessage } from "./types.ts";
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
 * import { SessionDB } from "./session_db.ts";
 * import type { Message } from "./types.ts";
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
 * import { SessionDB } from "./session_db.ts";
 * import type { NewSession } from "./types.ts";
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
 * import { SessionDB } from "./session_db.ts";
 * import type { Obligation } from "./types.ts";
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
 * import type { RecoveredObligation } from "./types.ts";
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
   * `resend`: it may have been sent; send it again under `idempotencyKey` (an idempotent
   * transport) or with `recoveryMarker` in front of its content (`marked-at-least-once`).
   * `unknown`: it may have been sent and cannot be resent safely; it was marked unknown.
   */
  action: "send" | "resend" | "unknown";
  /** The key the transport deduplicates by (the obligation id). */
  idempotencyKey: string;
  /**
   * On a `resend` under `marked-at-least-once`: the marker to send in front of the
   * content, so that a copy the platform may already show is visibly a resend.
   */
  recoveryMarker?: string;
}

/**
 * Options of {@linkcode SessionDB.sweepRecoverable}.
 *
 * @example
 * ```ts
 * import { SessionDB } from "./session_db.ts";
 * import type { SweepOptions } from "./types.ts";
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
 * import { SessionDB } from "./session_db.ts";
 * import type { CompressionPublish } from "./types.ts";
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
