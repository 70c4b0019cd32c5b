import { sqliteVersion } from "./sqlite/database.ts";
import { crashPoint } from "./crash_points.ts";
import { APPEND_SQL } from "./statements.ts";
import type { JournalMode } from "./journal_mode.ts";
import type { Connection } from "./_connection.ts";
import { openConnection } from "./_open.ts";
import {
  MESSAGE_COLUMNS,
  type MessageRow,
  SESSION_COLUMNS,
  type SessionRow,
  toMessage,
  toSession,
} from "./_rows.ts";
import { checkMessage, checkSessionId } from "./_validate.ts";
import { checkInvariants } from "./_invariants.ts";
import * as handoff from "./_handoff.ts";
import * as sessions from "./_sessions.ts";
import * as rotation from "./_rotation.ts";
import * as rewind from "./_rewind.ts";
import * as outbox from "./_outbox.ts";
import { type Delivery, deliveryOf } from "./delivery_policy.ts";
import type {
  CompressionPublish,
  HandoffState,
  Message,
  NewMessage,
  NewSession,
  Obligation,
  ObligationState,
  RecoveredObligation,
  Session,
  SessionDBOptions,
  SweepOptions,
} from "./types.ts";

/**
 * The reference session store: sessions and append-only messages in SQLite, a
 * parked-handoff claim, compression rotation, rewind and fork, and a delivery
 * outbox. Every write is one `BEGIN IMMEDIATE` transaction with a bounded, jittered
 * busy retry; a method returns only after COMMIT returned.
 *
 * Synchronous policy, so that acknowledged means durable even across power loss:
 * `synchronous=EXTRA` in both modes (in DELETE mode the journal unlink, the commit, is
 * followed by a directory sync; in WAL mode it costs what FULL does, and it still holds
 * when a failed switch to WAL left the connection journalling in rollback mode).
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
  #conn: Connection;
  #delivery: Delivery;

  private constructor(connection: Connection, delivery: Delivery) {
    this.#conn = connection;
    this.#delivery = delivery;
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
    const delivery = deliveryOf(options.deliveryPolicy, options.recoveryMarker);
    return new SessionDB(openConnection(path, options), delivery);
  }

  /** The database file. */
  get path(): string {
    return this.#conn.path;
  }

  /** The journal mode in effect on this connection. */
  get journalMode(): JournalMode {
    return this.#conn.journalMode;
  }

  /** Why the journal mode is what it is (e.g. the WAL-reset gate). */
  get journalModeReason(): string {
    return this.#conn.journalModeReason;
  }

  /**
   * What a recovery sweep does with an obligation that may have been sent, on a
   * transport that does not deduplicate (`DeliveryPolicy`).
   */
  get deliveryPolicy(): "at-most-once" | "marked-at-least-once" {
    return this.#delivery.policy;
  }

  /** The SQLite version this store runs on. */
  get sqliteVersion(): string {
    return sqliteVersion();
  }

  /** Whether the store is open. */
  get isOpen(): boolean {
    return this.#conn.isOpen;
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
    sessions.createSession(this.#conn, id, options);
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
    return sessions.endSession(this.#conn, id, reason);
  }

  /**
   * Reopens an ended session. A session rotated by compression is refused when it has
   * a continuation: resume the continuation instead ({@linkcode SessionDB.resolveResumeSessionId}).
   *
   * @param id The session id.
   * @returns `true` when it was ended and is now open.
   */
  reopenSession(id: string): boolean {
    return sessions.reopenSession(this.#conn, id);
  }

  /**
   * Reads a session.
   *
   * @param id The session id.
   * @returns The session, or `undefined`.
   */
  getSession(id: string): Session | undefined {
    return this.#conn.session(id);
  }

  /**
   * Lists sessions, oldest first.
   *
   * @param options An optional source filter and limit.
   * @returns The sessions.
   */
  listSessions(options: { source?: string; limit?: number } = {}): Session[] {
    const rows = this.#conn.read("list sessions", () =>
      this.#conn.stmt(
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
   * @throws {SessionEndedError} The session ended (`endSession`): reopen it first.
   */
  appendMessage(sessionId: string, message: NewMessage): number {
    checkSessionId(sessionId);
    checkMessage(message);
    const id = this.#conn.write("appendMessage", () => {
      this.#conn.requireAppendable(sessionId);
      const rowId = this.#conn.insertMessage(sessionId, message);
      crashPoint("appendMessage:afterInsert");
      this.#conn.stmt(APPEND_SQL.updateOne).run(sessionId);
      crashPoint("appendMessage:afterCount");
      return rowId;
    }, this.#conn.appendDeadlineMs);
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
    const ids = this.#conn.write("appendMessages", () => {
      this.#conn.requireAppendable(sessionId);
      const out: number[] = [];
      for (const message of messages) {
        out.push(this.#conn.insertMessage(sessionId, message));
        crashPoint("appendMessages:afterInsert");
      }
      this.#conn.stmt(APPEND_SQL.updateMany).run(out.length, sessionId);
      crashPoint("appendMessages:afterCount");
      return out;
    }, this.#conn.appendDeadlineMs);
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
    return this.#conn.read("read messages", () => this.#conn.stmt(sql).all<MessageRow>(sessionId))
      .map(toMessage);
  }

  /**
   * Counts a session's active messages.
   *
   * @param sessionId The session.
   * @returns The number of active rows.
   */
  messageCount(sessionId: string): number {
    const row = this.#conn.stmt(
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
    return handoff.requestHandoff(this.#conn, sessionId, platform);
  }

  /**
   * Claims a pending handoff with one predicated UPDATE: exactly one of any number of
   * racing claimants wins.
   *
   * @param sessionId The session.
   * @returns `true` for the winner.
   */
  claimHandoff(sessionId: string): boolean {
    return handoff.claimHandoff(this.#conn, sessionId);
  }

  /**
   * Marks a running handoff completed, by the process that claimed it.
   *
   * @param sessionId The session.
   * @returns `true` when it was running; `false` when it was not.
   * @throws {HandoffOwnershipError} When another process holds the claim.
   */
  completeHandoff(sessionId: string): boolean {
    return handoff.completeHandoff(this.#conn, sessionId);
  }

  /**
   * Marks a pending or running handoff failed, with the reason.
   *
   * @param sessionId The session.
   * @param error Why it failed.
   * @returns `true` when it was pending or running.
   */
  failHandoff(sessionId: string, error: string): boolean {
    return handoff.failHandoff(this.#conn, sessionId, error);
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
    return handoff.listPendingHandoffs(this.#conn);
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
    return rotation.tryAcquireCompressionLock(this.#conn, sessionId, { holder, ttlMs });
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
    return rotation.refreshCompressionLock(this.#conn, sessionId, { holder, ttlMs });
  }

  /**
   * Releases a compression lock held by `holder`.
   *
   * @param sessionId The session.
   * @param holder The holder.
   * @returns `true` when a lock was released.
   */
  releaseCompressionLock(sessionId: string, holder: string): boolean {
    return rotation.releaseCompressionLock(this.#conn, sessionId, holder);
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
    return rotation.publishCompressionChild(this.#conn, publish);
  }

  /**
   * Finds the open continuation of a rotated session.
   *
   * @param parentId The rotated session.
   * @returns The newest open continuation child, or `undefined`.
   */
  findLiveCompressionChild(parentId: string): Session | undefined {
    return rotation.findLiveCompressionChild(this.#conn, parentId);
  }

  /**
   * Reopens a session left ended by `compression` without a continuation (a legacy
   * orphan), only when it has no child and no live compression lock.
   *
   * @param sessionId The session.
   * @returns `true` when it was reopened.
   */
  reopenOrphanedCompressionSession(sessionId: string): boolean {
    return rotation.reopenOrphanedCompressionSession(this.#conn, sessionId);
  }

  /**
   * Follows compression rotations from a session to the tip of its chain.
   *
   * @param sessionId Where to start.
   * @returns The id to resume (the session itself when it was not rotated).
   */
  resolveResumeSessionId(sessionId: string): string {
    return rotation.resolveResumeSessionId(this.#conn, sessionId);
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
    return rewind.rewindToMessage(this.#conn, sessionId, { ...options, targetId });
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
    return rewind.forkSession(this.#conn, sessionId, { atMessageId, newId });
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
    return outbox.recordObligation(this.#conn, obligation);
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
    return outbox.markAttempting(this.#conn, id, expectedFence);
  }

  /**
   * Marks an attempting obligation delivered (CAS on state and fence).
   *
   * @param id The obligation id.
   * @param fence The fence returned by the attempt.
   * @returns `true` when this call marked it.
   */
  markDelivered(id: string, fence: number): boolean {
    return outbox.markDelivered(this.#conn, id, fence);
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
    return outbox.markFailed(this.#conn, id, { fence, reason });
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
    return outbox.markUnknown(this.#conn, id, { fence, reason });
  }

  /**
   * Takes over the open obligations of dead processes, in one transaction so that
   * concurrent recoverers never take the same one. A `pending` one is returned to send;
   * an `attempting` one may already have been sent, so it is returned to resend when the
   * transport deduplicates by idempotency key; otherwise, under the store's
   * `deliveryPolicy`, it is marked `unknown` (`at-most-once`) or returned to resend with
   * the recovery marker (`marked-at-least-once`).
   *
   * @param options Whether the transport is idempotent.
   * @returns What this recoverer now owns, and what to do with each.
   */
  sweepRecoverable(options: SweepOptions = {}): RecoveredObligation[] {
    return outbox.sweepRecoverable(this.#conn, options, this.#delivery);
  }

  /**
   * Reads one obligation.
   *
   * @param id The obligation id.
   * @returns The obligation, or `undefined`.
   */
  getObligation(id: string): Obligation | undefined {
    return outbox.getObligation(this.#conn, id);
  }

  /**
   * Lists obligations, oldest first.
   *
   * @param filter Optional session and state.
   * @returns The obligations.
   */
  listObligations(filter: { sessionId?: string; state?: ObligationState } = {}): Obligation[] {
    return outbox.listObligations(this.#conn, filter);
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
    return checkInvariants(this.#conn);
  }

  /**
   * Closes the store (a passive checkpoint first in WAL mode). Idempotent; any later
   * call fails with {@linkcode SessionDBClosedError}.
   */
  close(): void {
    this.#conn.close();
  }

  /** Closes the store at the end of a `using` block. */
  [Symbol.dispose](): void {
    this.close();
  }
}
