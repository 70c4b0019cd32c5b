/**
 * The store under test as the cells see it: its methods, what they take and return, and
 * the target module that opens it. Re-exported by `target.ts`, beside the contract.
 *
 * @module
 */
import type { DeliveryPolicy } from "../../session_db/delivery_policy.ts";

/**
 * A value or a promise of it.
 *
 * @example
 * ```ts
 * import type { MaybePromise } from "./target.ts";
 * async function settle(read: () => MaybePromise<number>): Promise<number> {
 *   return await read(); // a synchronous store and an asynchronous one alike
 * }
 * console.log(await settle(() => 1), await settle(() => Promise.resolve(2))); // 1 2
 * ```
 */
export type MaybePromise<T> = T | Promise<T>;

/**
 * Options the cells pass to `openStore`.
 *
 * @example
 * ```ts
 * import type { StoreOptions } from "./target.ts";
 * import { SessionDB } from "../../session_db/session_db.ts";
 * export function openStore(path: string, options: StoreOptions): SessionDB {
 *   return SessionDB.open(path, options.journalMode ? { journalMode: options.journalMode } : {});
 * }
 * ```
 */
export interface StoreOptions {
  /** The leg's journal mode; `undefined` on the default leg. */
  journalMode?: "wal" | "delete";
}

/**
 * A message as the cells write it.
 *
 * @example
 * ```ts
 * import type { CellMessage, Store } from "./target.ts";
 * async function say(store: Store, sessionId: string, content: string): Promise<number> {
 *   const message: CellMessage = { role: "user", content };
 *   return await store.appendMessage(sessionId, message);
 * }
 * ```
 */
export interface CellMessage {
  /** The role. */
  role: "system" | "user" | "assistant" | "tool";
  /** The text. */
  content: string;
}

/**
 * A message as the cells read it back.
 *
 * @example
 * ```ts
 * import type { Store, StoredMessage } from "./target.ts";
 * async function rewound(store: Store, sessionId: string): Promise<StoredMessage[]> {
 *   const rows = await store.getMessages(sessionId, { includeInactive: true });
 *   return rows.filter((row) => row.active === false);
 * }
 * ```
 */
export interface StoredMessage {
  /**
   * The id: an integer, unique across the store, strictly increasing in append order (where
   * it starts is the store's: 0 as good as 1).
   */
  id: number;
  /** The role. */
  role: string;
  /** The text. */
  content: string | null;
  /**
   * `false` once a rewind soft-deleted it (read with `includeInactive`; default `true`);
   * `0` and `1`, as SQLite stores a boolean, are read as `false` and `true`.
   */
  active?: boolean;
}

/**
 * A session as the cells read it back.
 *
 * @example
 * ```ts
 * import type { Store, StoredSession } from "./target.ts";
 * async function rotated(store: Store): Promise<StoredSession[]> {
 *   const sessions = await store.listSessions?.() ?? [];
 *   return sessions.filter((session) => session.endReason === "compression");
 * }
 * ```
 */
export interface StoredSession {
  /** The id. */
  id: string;
  /** The parent (compression or fork), or `null`. */
  parentSessionId: string | null;
  /** When it ended, or `null`. */
  endedAt: number | null;
  /** Why it ended, e.g. `compression`, or `null`. */
  endReason: string | null;
  /** The handoff state, or `null`. */
  handoffState?: string | null;
}

/**
 * The store under test. The core (`createSession`, `appendMessage`, `getMessages`,
 * `close`) is required; each other method is needed by the cells named in its
 * comment ({@linkcode CELL_METHODS}), and a store without it gets those cells SKIPPED.
 * Beside other writing processes any write may be refused with an error named
 * `BusyDeadlineError` after the store's busy deadline (at least a second), changing nothing.
 *
 * @example
 * ```ts
 * import { openTargetStore, type Store } from "./target.ts";
 * const target = new URL("../reference_target.ts", import.meta.url);
 * const store: Store = await openTargetStore(target, `${Deno.makeTempDirSync()}/s.db`);
 * await store.createSession("s1");
 * console.log(await store.appendMessage("s1", { role: "user", content: "hello" })); // 1
 * console.log(await store.checkInvariants?.()); // []
 * await store.close();
 * ```
 */
export interface Store {
  /** Creates a session, keeping an existing one; durable once it returns. (core: every cell) */
  createSession(id: string): MaybePromise<unknown>;
  /**
   * Appends a message; returns its id only once it is committed. An append to a
   * session ended by a compression rotation throws an error named
   * `CompressionSessionClosedError` (cell 3). Beside other writing processes it waits, and
   * may refuse only with an error named `BusyDeadlineError` after trying for at least its busy
   * deadline, changing nothing (cell 6, F5), as any other write may. A text it cannot keep
   * as given may be refused with an error of its own class, changing nothing. (core: every
   * cell's probe, cells 1, 3, 4)
   */
  appendMessage(sessionId: string, message: CellMessage): MaybePromise<number>;
  /**
   * The active messages in id order; with `includeInactive` (cell 4) every row, each
   * with its `active` flag. An unknown session may return `[]` or throw. (core: cells
   * 1, 3, 4)
   */
  getMessages(
    sessionId: string,
    options?: { includeInactive?: boolean },
  ): MaybePromise<StoredMessage[]>;
  /** Closes the store. (core: every cell) */
  close(): MaybePromise<void>;
  /**
   * The store's own invariant check: one line per violation, `[]` when all hold (`undefined`
   * or `null` read the same, one string as a list of it). Every cell asserts it empty on
   * each recovered state. (optional)
   */
  checkInvariants?(): MaybePromise<string[]>;
  /**
   * Parks a session for handoff (state `pending`): `true` when it had none, or a completed
   * or failed one; `false` when one is already pending or running, and then it changes
   * nothing. Only the session named is touched. (cell 2)
   */
  requestHandoff?(sessionId: string, platform: string): MaybePromise<boolean>;
  /**
   * Claims a pending handoff (state `running`): `true` for exactly one of any number of
   * racing processes, `false` for the others. Only the session named is touched. (cell 2)
   */
  claimHandoff?(sessionId: string): MaybePromise<boolean>;
  /**
   * Completes the running handoff this process claimed: `false` (or a typed error) when
   * it is not running, or when another claimant holds it now. (cell 7)
   */
  completeHandoff?(sessionId: string): MaybePromise<boolean>;
  /** Fails a pending or running handoff, with the reason: the takeover of a stalled claim. (cell 7) */
  failHandoff?(sessionId: string, error: string): MaybePromise<boolean>;
  /** The handoff state (`pending`, `running`, …), or `null`. (cell 2) */
  getHandoffState?(sessionId: string): MaybePromise<string | null>;
  /**
   * Reads a session, `undefined` when unknown (`null` or a not-found error, such as
   * `SessionNotFoundError`, read the same). (cells 1 and 4, optional: tells a missing session
   * from an empty one)
   */
  getSession?(id: string): MaybePromise<StoredSession | undefined>;
  /** Lists every session. (cell 3) */
  listSessions?(): MaybePromise<StoredSession[]>;
  /**
   * Takes the compression lock for at least `ttlMs` (expiries kept in whole seconds, rounded
   * up, are fine: a lease is judged lapsed once another holder can take over a lease as long
   * taken after it, at most 10 s past `ttlMs`); a lock held by another holder is taken over
   * only when expired or when its holder's `pid=<pid>` is dead. (cell 3)
   */
  tryAcquireCompressionLock?(
    sessionId: string,
    holder: string,
    ttlMs: number,
  ): MaybePromise<boolean>;
  /**
   * Publishes a rotation atomically, under the lock: the continuation child (its parent
   * `parentId`) with `messages`, and the parent ended with reason `compression`; no other
   * session changes; all or nothing. (cell 3)
   */
  publishCompressionChild?(publish: {
    parentId: string;
    childId: string;
    holder: string;
    messages: CellMessage[];
  }): MaybePromise<unknown>;
  /**
   * Releases the compression lock of `sessionId` held by `holder`: `true` once released.
   * When `holder` does not hold it, `false` (or a typed error) and the lock stays in
   * force; other sessions' locks are never touched. (cell 3)
   */
  releaseCompressionLock?(sessionId: string, holder: string): MaybePromise<boolean>;
  /**
   * Rewinds to before a user message: soft-deletes it and every later active row in one
   * transaction, guarded by a compare-and-swap on the active ids: when they differ from
   * `expectedActiveIds` it throws an error named `RewindConflictError` and changes
   * nothing. Returns how many rows it deactivated. (cell 4)
   */
  rewindToMessage?(
    sessionId: string,
    targetId: number,
    options: { expectedActiveIds?: readonly number[] },
  ): MaybePromise<number>;
  /**
   * Forks a branch `newId` holding copies (new ids) of the active messages up to and
   * including `atMessageId`, in one transaction; the parent is untouched. (cell 4)
   */
  forkSession?(sessionId: string, atMessageId: number, newId: string): MaybePromise<unknown>;
  /**
   * Records a delivery obligation (state `pending`, owned by this process); recording the
   * same session, reference and content twice is a no-op. (cell 5)
   */
  recordObligation?(
    obligation: { sessionId: string; messageRef: string; content: string },
  ): MaybePromise<StoredObligation>;
  /**
   * Moves a pending obligation to `attempting` (compare-and-swap on the fence) before a
   * send; returns the new fence, or `null` when the swap lost or the obligation is not
   * pending (attempting, delivered, unknown, failed: never reopened). (cell 5)
   */
  markAttempting?(id: string, expectedFence: number): MaybePromise<number | null>;
  /**
   * Marks this attempting obligation, and no other, delivered (compare-and-swap on the
   * fence): `false` (or a typed error), changing nothing, when its fence is no longer
   * `fence` (a sweep took the attempt over) or it is not attempting. (cell 5)
   */
  markDelivered?(id: string, fence: number): MaybePromise<boolean>;
  /** Marks an open obligation failed, with the reason. (cell 5, when the store lacks `markUnknown`) */
  markFailed?(id: string, fence: number, reason: string): MaybePromise<boolean>;
  /** Marks an open obligation unknown (maybe sent), with the reason. (cells 5 and 7) */
  markUnknown?(id: string, fence: number, reason: string): MaybePromise<boolean>;
  /**
   * Takes over the open obligations of dead processes (never a live process's, nor the
   * sweeper's own), all in one transaction, so that concurrent recoverers get disjoint
   * sets and a sweep killed midway takes none: `send` (never attempted: mark attempting,
   * then send), `resend` (maybe sent: send again under `idempotencyKey` when
   * `idempotentTransport`, or with `recoveryMarker` under `marked-at-least-once`),
   * `unknown` (maybe sent and not resendable safely under `at-most-once`: already marked
   * with a reason). The returned obligation carries the fence the recoverer continues
   * with. An omitted `idempotentTransport` means `false`, a plain transport: the store keeps
   * its declared policy as on a plain transport. (cell 5)
   */
  sweepRecoverable?(
    options: { idempotentTransport?: boolean },
  ): MaybePromise<RecoveredObligationView[]>;
  /**
   * Appends messages in one transaction, all or nothing; returns their ids, contiguous in
   * the store's id order and after every earlier acknowledged id, only once committed.
   * An empty batch returns `[]` and changes nothing (never an error).
   * (cell 9)
   */
  appendMessages?(sessionId: string, messages: CellMessage[]): MaybePromise<number[]>;
  /** How many active messages a session holds; agrees with `getMessages`. (cell 9, when present) */
  messageCount?(sessionId: string): MaybePromise<number>;
  /**
   * Ends a session with `reason`, durably once it returns: `true` when this call ended
   * it, `false` when it had already ended (the first reason stays). An append to an
   * ended session then throws an error named `SessionEndedError` (or
   * `CompressionSessionClosedError`) and changes nothing. (cell 10)
   */
  endSession?(id: string, reason: string): MaybePromise<boolean>;
  /**
   * Makes an ended session writable again, durably once it returns: `true` when it was
   * ended. A session rotated by compression into a live continuation is refused (a typed
   * error or `false`) and stays ended. (cell 10)
   */
  reopenSession?(id: string): MaybePromise<boolean>;
  /**
   * Returns the session, creating it when missing: any number of processes racing it on
   * one id create exactly one session. (cell 10)
   */
  ensureSession?(id: string): MaybePromise<unknown>;
  /**
   * Extends the compression lock `holder` holds for `ttlMs` from now: `true` once
   * extended (durably); `false` (or a typed error), changing nothing, when `holder` does
   * not hold a live lock, e.g. its lease lapsed and another holder took it over. (cell 11)
   */
  refreshCompressionLock?(sessionId: string, holder: string, ttlMs: number): MaybePromise<boolean>;
  /**
   * The one live tip of a session's compression chain: the session itself when it was
   * not rotated (or its rotation never published), else the tip its continuations lead
   * to; never an ended parent whose continuation lives, never a session that does not
   * exist. The same in every process and after every recovery. (cell 8)
   */
  resolveResumeSessionId?(sessionId: string): MaybePromise<string>;
  /**
   * The open continuation of a rotated session, or `undefined`; agrees with
   * `resolveResumeSessionId`. (cell 8, when present)
   */
  findLiveCompressionChild?(parentId: string): MaybePromise<StoredSession | undefined>;
  /**
   * Reopens a session ended by `compression` whose continuation was never published (its
   * rotator died) and whose lock holder is gone: `true` when reopened; `false` when it has
   * a continuation or a live lock holder. A store whose own recovery reopens such orphans
   * may leave it out. (cell 8, when present)
   */
  reopenOrphanedCompressionSession?(sessionId: string): MaybePromise<boolean>;
  /**
   * Every session whose handoff is requested and not yet claimed (state `pending`),
   * each once, oldest first; never a claimed (`running`), completed or failed one.
   * (cell 12)
   */
  listPendingHandoffs?(): MaybePromise<StoredSession[]>;
  /** Lists the obligations, oldest first. (cell 5) */
  listObligations?(): MaybePromise<StoredObligation[]>;
  /** Reads one obligation. (cells 5 and 7, when present) */
  getObligation?(id: string): MaybePromise<StoredObligation | undefined>;
}

/**
 * A delivery obligation as the cells read it back (cell 5).
 *
 * @example
 * ```ts
 * import type { Store, StoredObligation } from "./target.ts";
 * async function undelivered(store: Store): Promise<StoredObligation[]> {
 *   const all = await store.listObligations?.() ?? [];
 *   return all.filter((obligation) => obligation.state !== "delivered");
 * }
 * ```
 */
export interface StoredObligation {
  /** The id (also the idempotency key the cells send with). */
  obligationId: string;
  /** The payload. */
  content: string;
  /**
   * `pending`, `attempting`, `delivered`, `failed`, `unknown` or `abandoned` (the last
   * three with a reason in `lastError`).
   */
  state: string;
  /** The compare-and-swap fence. */
  deliveryFence: number;
  /** Why it is `failed`, `unknown` or `abandoned`, or `null`. */
  lastError: string | null;
}

/**
 * What a recoverer must do with an obligation it took over (cell 5).
 *
 * @example
 * ```ts
 * import type { RecoveredObligationView, Store } from "./target.ts";
 * type Send = (key: string, body: string) => Promise<void>;
 * async function resend(store: Store, send: Send): Promise<void> {
 *   const sweep = store.sweepRecoverable?.({ idempotentTransport: true }) ?? [];
 *   const taken: RecoveredObligationView[] = await sweep;
 *   for (const { action, obligation, idempotencyKey } of taken) {
 *     if (action !== "resend") continue; // `send` needs markAttempting first
 *     await send(idempotencyKey, obligation.content);
 *     await store.markDelivered?.(obligation.obligationId, obligation.deliveryFence);
 *   }
 * }
 * ```
 */
export interface RecoveredObligationView {
  /** The obligation after the takeover. */
  obligation: StoredObligation;
  /** `send`, `resend` or `unknown`. */
  action: "send" | "resend" | "unknown";
  /** The key a deduplicating transport uses. */
  idempotencyKey: string;
  /**
   * On a `resend` under `marked-at-least-once`: the visible marker the recoverer sends in
   * front of the content (non-empty, with at least one character a reader sees: not only
   * white space, zero-width or other format characters, controls or combining marks);
   * absent otherwise.
   */
  recoveryMarker?: string;
}

/**
 * A target module: what `loadTarget` imports.
 *
 * @example
 * ```ts
 * import type { TargetModule } from "./target.ts";
 * import { crashPoints, SessionDB } from "../../session_db/mod.ts";
 * const target: TargetModule = {
 *   openStore: (path, { journalMode }) => SessionDB.open(path, journalMode ? { journalMode } : {}),
 *   crashPoints,
 * };
 * ```
 */
export interface TargetModule {
  /**
   * Opens (creating when missing) the store at `path`, in `options.journalMode` when
   * given (a leg the store does not honour is SKIPPED). Called in every child process
   * and in the test process, often on the same file at once.
   */
  openStore(path: string, options: StoreOptions): MaybePromise<Store>;
  /**
   * The crash points the store honours through `SESSION_DB_CRASH_AT`, synchronously (a list
   * exported as `crashPoints` reads the same, nothing as none; anything else is a
   * `TargetError` naming it); cells 3, 4 and 5 crash at those named for their operations.
   * (optional: without it those runs are left out, and the random kills still run)
   */
  crashPoints?(): string[];
  /**
   * The delivery policy the store keeps (`DeliveryPolicy`), or a function returning it;
   * cell 5 judges it. (optional: without it, cell 5 judges the policy the store's sweeps
   * imply, and says so)
   */
  deliveryPolicy?: DeliveryPolicy | (() => DeliveryPolicy);
  /**
   * Writes, into the closed store at `path` and in the store's own format, a state that
   * breaks one of its schema rules, bypassing the checks its methods make: cell 13 then
   * opens it and expects a typed refusal. `violation` names the rule: `orphan-message` (a
   * message of session `ghost`, which does not exist), `id-regression` (a message of
   * session `s` with an id lower than its last), `fork-past-end` (a fork `f` of `s`
   * claiming a message past `s`'s end). Returns `true` once planted, `false` for a rule the
   * store cannot hold on disk (`1` and `0` read the same; any other answer FAILs cell 13,
   * named). (optional: without it, cell 13 judges only the refusals of writes)
   */
  plantViolation?(
    path: string,
    violation: "orphan-message" | "id-regression" | "fork-past-end",
  ): MaybePromise<boolean>;
}

/**
 * A schema rule a stored state can break (cell 13).
 *
 * @example
 * ```ts
 * import type { SchemaViolation } from "./target.ts";
 * const every: SchemaViolation[] = ["orphan-message", "id-regression", "fork-past-end"];
 * console.log(every.length); // 3
 * ```
 */
export type SchemaViolation = Parameters<NonNullable<TargetModule["plantViolation"]>>[1];
