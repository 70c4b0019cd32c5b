/**
 * The target contract: what a store must offer for the cells to probe it.
 *
 * A **target** is a module whose `openStore(path, options)` returns the store under
 * test (synchronously or as a promise), and optionally `crashPoints()`. Store methods
 * may be synchronous or return promises. The cells call them from several OS processes
 * at once (each child opens its own store on the same file), and kill those processes
 * with SIGKILL.
 *
 * Which methods each cell needs ({@linkcode CELL_METHODS}); a store that lacks any of
 * a cell's methods gets that cell SKIPPED with a reason naming them (an ignored test),
 * never FAILED and never PASSED:
 *
 * | cell | needs | uses when present |
 * | --- | --- | --- |
 * | every cell (the leg probe) | `createSession`, `appendMessage`, `close` | |
 * | 1 prefix durability | `getMessages` | `checkInvariants`; `getSession` or `listSessions` (else an append asks whether a session exists) |
 * | 2 consume-once | `requestHandoff`, `claimHandoff`, `getHandoffState` | `checkInvariants` |
 * | 3 rotation atomicity | `getMessages`, `listSessions`, `tryAcquireCompressionLock`, `publishCompressionChild`, `releaseCompressionLock` | `checkInvariants`; `crashPoints()` named `publishCompressionChild:*` |
 * | 4 fork determinism | `getMessages` (with `includeInactive`), `rewindToMessage`, `forkSession` | `getSession`, `checkInvariants`; `crashPoints()` named `rewindToMessage:*` and `forkSession:*` |
 * | 5 outbox exactly-once | `recordObligation`, `markAttempting`, `markDelivered`, `sweepRecoverable`, `listObligations` | `checkInvariants`; the target's `deliveryPolicy`; `getObligation`; `markUnknown` or `markFailed` (an obligation settled while an attempt of it is stopped); `crashPoints()` named `recordObligation:afterCommit`, `markAttempting:afterCommit` and `sweepRecoverable:afterClaim` |
 * | 6 concurrent writers | `getMessages` | `checkInvariants`; `recordObligation` + `listObligations` (the cron role's outbox); `listSessions` + the cell 3 lock methods (its rotations) |
 * | 7 fenced ownership | `getMessages`, `listSessions`, `tryAcquireCompressionLock`, `publishCompressionChild`, `releaseCompressionLock` | `checkInvariants`; `requestHandoff` + `claimHandoff` + `completeHandoff` + `failHandoff` + `getHandoffState` (the claimed handoff); `recordObligation` + `markAttempting` + `markDelivered` + `markUnknown` + `getObligation` (the outbox attempt) |
 *
 * What the cells rely on beyond the method shapes:
 *
 * - **Durability**: a method returns (or its promise resolves) only once its effect is
 *   committed; each operation is atomic. Another process reads a write as soon as it
 *   returned (cell 2, after `requestHandoff`), and a process killed then, with no further
 *   call and no close, keeps it (cells 1 to 5: after `createSession`, `claimHandoff`,
 *   `releaseCompressionLock`, `publishCompressionChild`, `rewindToMessage`, `forkSession`,
 *   `markDelivered`, `sweepRecoverable`).
 * - **Message ids** are numbers, unique across the whole store (a fork's copies get new
 *   ids) and strictly increasing in append order; `getMessages` returns them in id
 *   order.
 * - **Typed errors**, recognised by their `name`: an append to a session ended by a
 *   compression rotation throws `CompressionSessionClosedError`; a rewind whose
 *   `expectedActiveIds` differ from the active ids throws `RewindConflictError` and
 *   changes nothing.
 * - **Journal mode**: `options.journalMode` is the leg (`"wal"`, `"delete"`, or absent
 *   on the default leg). The mode the writer ran in is observed on disk at every kill
 *   (and in the leg probe, killed while the store is open): a leg with any observation
 *   in another mode is SKIPPED with the observations, never counted as evidence. A
 *   store whose file is not SQLite (or that keeps its data elsewhere) runs on the
 *   default leg only; the other legs SKIP as not applicable.
 * - **A branch exists** (cell 4): a store tells a missing branch from an empty one by
 *   `getSession` or `listSessions`; with neither, cell 4 SKIPs.
 * - **Crash points** (optional): when `SESSION_DB_CRASH_AT=<point>[@<k>]` names one of
 *   `crashPoints()`, the process kills itself with SIGKILL the k-th time it gets there.
 *   Points the store does not list are not its business (the cells' children own
 *   `sender:afterSend` and `recoverer:afterSend`).
 * - **Liveness**: the compression-lock holder contains `pid=<pid>`, and an obligation
 *   is owned by the process that recorded or took it; the lock and the obligations of
 *   a dead process are recoverable at once (no lease to wait out).
 * - **Idempotency key**: the obligation id (stable across resends).
 * - **Outbox guards** (cell 5): `markAttempting` moves only a pending obligation (any
 *   other state is refused with `null`, whatever the fence); `markDelivered` marks only
 *   the obligation named, and only while it is attempting under exactly that fence: once
 *   a sweep took the attempt over (a new fence) or settled it (delivered, unknown, failed)
 *   it returns `false` (or throws a typed error) and changes nothing. `sweepRecoverable`
 *   takes only obligations whose owner is dead (never a live process's, never the
 *   sweeper's own), all of them in one transaction (a sweep killed midway takes none),
 *   so concurrent sweeps return disjoint sets; what it returned is on disk when it returns.
 *   Each guard is checked in the write's own transaction: a sweep, an attempt or a
 *   delivery mark stopped inside (before any of its lock calls) while another process
 *   sweeps the same dead owner's obligations, settles the obligation (`markUnknown`, else
 *   `markFailed`, of a pending one) or takes the attempt over, is refused or takes only
 *   what is still owed when it goes on.
 * - **Delivery policy** (cell 5): what a sweep does with an obligation that may have been
 *   sent (its owner died while it was `attempting`, or after sending and before
 *   `markDelivered`) when the transport does not deduplicate. The target declares it as
 *   `deliveryPolicy` ({@linkcode DeliveryPolicy}); a target that declares none is judged
 *   under the policy its sweeps' answers imply (`resend` on such a transport:
 *   `marked-at-least-once`; otherwise `at-most-once`), and the report says which and why.
 *   `at-most-once`: the sweep answers `unknown` and leaves the obligation `unknown` (or
 *   `failed` or `abandoned`) with a reason; nothing reaches the platform twice. A
 *   never-attempted (`pending`) obligation is still delivered. `marked-at-least-once`:
 *   the sweep answers `resend` with a non-empty `recoveryMarker`, which the recoverer sends
 *   in front of the content (the platform gets `recoveryMarker + content`, the marker is
 *   where a reader sees that this copy may repeat one); every obligation reaches the
 *   platform at least once and at most once unmarked, and ends `delivered` (or `abandoned`
 *   with a reason). Per obligation, after the first clean boot, the platform holds exactly
 *   these (unmarked, marked) copies, by where its first owner died: delivered (1,0),
 *   recorded and never attempted (1,0), attempting and not sent (0,1 marked; 0,0
 *   at-most-once), sent and not booked (1,1; 1,0 at-most-once), plus one marked copy for a
 *   boot killed inside its resend of it (at-most-once never resends). A boot killed inside a
 *   plain redelivery (`send`) leaves a maybe-sent obligation: resent marked, or settled,
 *   never resent unmarked. With an idempotent transport (`idempotentTransport: true`), under
 *   either policy, every obligation reaches the platform exactly once after deduplication
 *   by key, and ends `delivered`. Every copy carries the content that was recorded.
 * - **Boots** (cell 5): the first clean boot's sweeps (three or more at once) claim
 *   disjoint sets whose union is exactly the owed set (every open obligation of a dead
 *   owner), even when each sweeper has read the rows before any claims (the cell holds
 *   each one just before its first file-system write inside the sweep, through the
 *   `LD_PRELOAD` recorder, until every other one has read or is refused a lock by a held
 *   one). Two later boots claim nothing, send nothing and change no byte of the store's
 *   files (SQLite's `-shm` aside). After all that, the store takes a new life's obligations
 *   and recovers them too.
 * - **Several processes, one file** (cell 6): any number of processes write the same
 *   file at once, and another may hold the write lock for seconds (the cell holds it
 *   1.5 s as the roles start). Under contention a write waits; it may refuse only with an error
 *   named `BusyDeadlineError`, after trying for at least its busy deadline (the cell
 *   asks for at least 1 s), and a refused write changes nothing. Every other error, a
 *   process dying with exit 0 mid-work, or a returned id that is not the committed
 *   row's is a failure. An append acknowledged before another is invoked (in real
 *   time, in any process) has the smaller id.
 * - **Fences** (cell 7): an owner that lost its lease or its fence cannot act. The
 *   compression lock expires after `ttlMs` even when its holder is alive (stopped):
 *   then `publishCompressionChild` by the old holder throws a typed error (any error
 *   whose `name` is a class of the store's own, not `Error`) and changes nothing,
 *   whether or not a new holder took the lock over, published or released it. A
 *   handoff claimed by a process that was then failed (`failHandoff`) and re-claimed by
 *   another cannot be completed by the old claimant: `completeHandoff` from it returns
 *   `false` or throws a typed error, and the new claim stays `running` until the new
 *   claimant completes it. A mark (`markDelivered`) with a fence that another process
 *   has already settled (`markUnknown`) returns `false` or throws a typed error and
 *   changes nothing. Settling calls change only what they name, from a state they may
 *   leave (`completeHandoff` running, `failHandoff` pending or running, `markUnknown`
 *   pending or attempting), under its current fence, and are durable when they return.
 * - **Extra child permissions** (optional): the cells' children run with narrow
 *   permissions (read the target's folder, write the run folder, FFI to the leg's SQLite
 *   library, a list of variables). A store that needs more (an npm package with a native
 *   addon reads its variables, asks sys APIs, loads its addon from Deno's npm cache)
 *   exports `childPermissions`: a {@linkcode ChildPermissions} object, or a function of a
 *   {@linkcode PermissionContext} (Deno's cache folders, resolved at run time) returning
 *   one. Only `env`, `sys`, `ffi`, `read` and `run` exist: net and write are never granted.
 *   `run` names the programs the store starts (a worker in another language, see
 *   `docs/worker_protocol.md`), each a name on `PATH` or an absolute path, never a shell;
 *   a program this machine lacks SKIPs every cell, naming it. Every child of every cell and
 *   power-loss cell (and the conformance probe) gets exactly these on top of its scope, and
 *   the cell reports and the conformance report name them. A bad declaration (another key,
 *   a wrong type, a relative path, a shell) is a usage error naming the target and the fix.
 *
 * @example
 * ```ts
 * import { CELL_METHODS, loadTarget } from "./target.ts";
 * const target = await loadTarget(new URL("../reference_target.ts", import.meta.url));
 * console.log(typeof target.openStore, CELL_METHODS[5].includes("sweepRecoverable")); // function true
 * ```
 *
 * @module
 */

export type {
  ChildPermissions,
  ChildPermissionsDeclaration,
  PermissionContext,
} from "./child_permissions.ts";
export { loadTarget, openTargetStore, TargetError, targetSpecifier } from "./load_target.ts";
// One definition for the store and the contract: a target declares the policy its store
// keeps with the same type the reference store is opened with.
import type { DeliveryPolicy } from "../../session_db/delivery_policy.ts";
export type { DeliveryPolicy };
export { DELIVERY_POLICIES } from "../../session_db/delivery_policy.ts";

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
  /** The id: unique across the store, strictly increasing in append order. */
  id: number;
  /** The role. */
  role: string;
  /** The text. */
  content: string | null;
  /** `false` once a rewind soft-deleted it (read with `includeInactive`; default `true`). */
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
   * `CompressionSessionClosedError` (cell 3). (core: every cell's probe, cells 1, 3, 4)
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
   * The store's own invariant check: one line per violation, `[]` when all hold. Every
   * cell asserts it empty on each recovered state. (optional)
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
  /** Reads a session, `undefined` when unknown. (cells 1 and 4, optional: tells a missing session from an empty one) */
  getSession?(id: string): MaybePromise<StoredSession | undefined>;
  /** Lists every session. (cell 3) */
  listSessions?(): MaybePromise<StoredSession[]>;
  /**
   * Takes the compression lock for `ttlMs`; a lock held by another holder is taken over
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
   * with. (cell 5)
   */
  sweepRecoverable?(
    options: { idempotentTransport?: boolean },
  ): MaybePromise<RecoveredObligationView[]>;
  /** Lists the obligations, oldest first. (cell 5) */
  listObligations?(): MaybePromise<StoredObligation[]>;
  /** Reads one obligation. (cells 5 and 7, when present) */
  getObligation?(id: string): MaybePromise<StoredObligation | undefined>;
}

/**
 * A store method name.
 *
 * @example
 * ```ts
 * import { CELL_METHODS, type Store, type StoreMethod } from "./target.ts";
 * function missing(store: Store, cell: 1 | 2 | 3 | 4 | 5 | 6 | 7): StoreMethod[] {
 *   return CELL_METHODS[cell].filter((method) => typeof store[method] !== "function");
 * }
 * ```
 */
export type StoreMethod = keyof Store & string;

/** The methods of a rotation under the compression lock (cells 3 and 7). */
const ROTATION_METHODS: readonly StoreMethod[] = [
  "createSession",
  "appendMessage",
  "getMessages",
  "listSessions",
  "tryAcquireCompressionLock",
  "publishCompressionChild",
  "releaseCompressionLock",
  "close",
];

/**
 * The methods each cell needs, by cell number (the leg probe of every cell also calls
 * `createSession`, `appendMessage` and `close`). A store lacking any of them gets the
 * cell SKIPPED with a reason that names the missing ones.
 *
 * @example
 * ```ts
 * import { CELL_METHODS } from "./target.ts";
 * console.log(CELL_METHODS[2].join(", "));
 * // createSession, requestHandoff, claimHandoff, getHandoffState, close
 * ```
 */
export const CELL_METHODS: Readonly<Record<1 | 2 | 3 | 4 | 5 | 6 | 7, readonly StoreMethod[]>> = {
  1: ["createSession", "appendMessage", "getMessages", "close"],
  2: ["createSession", "requestHandoff", "claimHandoff", "getHandoffState", "close"],
  3: ROTATION_METHODS,
  4: ["createSession", "appendMessage", "getMessages", "rewindToMessage", "forkSession", "close"],
  5: [
    "createSession",
    "recordObligation",
    "markAttempting",
    "markDelivered",
    "sweepRecoverable",
    "listObligations",
    "close",
  ],
  6: ["createSession", "appendMessage", "getMessages", "close"],
  // Cell 7's one owner every store must have is the compression lock.
  7: ROTATION_METHODS,
};

/**
 * The methods a cell also exercises when the store has them (cell 7's handoff and outbox
 * owners), beyond {@linkcode CELL_METHODS}: the generated mutants change these too.
 *
 * @example
 * ```ts
 * import { CELL_OPTIONAL_METHODS } from "./target.ts";
 * console.log(CELL_OPTIONAL_METHODS[7]?.includes("completeHandoff")); // true
 * ```
 */
export const CELL_OPTIONAL_METHODS: Readonly<
  Partial<Record<1 | 2 | 3 | 4 | 5 | 6 | 7, readonly StoreMethod[]>>
> = {
  7: ["completeHandoff", "failHandoff", "markUnknown", "markDelivered"],
};

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
   * front of the content (non-empty); absent otherwise.
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
   * The crash points the store honours through `SESSION_DB_CRASH_AT`; cells 3, 4 and
   * 5 crash at those named for their operations. (optional: without it those runs
   * are left out, and the random kills still run)
   */
  crashPoints?(): string[];
  /**
   * The delivery policy the store keeps (`DeliveryPolicy`), or a function returning it;
   * cell 5 judges it. (optional: without it, cell 5 judges the policy the store's sweeps
   * imply, and says so)
   */
  deliveryPolicy?: DeliveryPolicy | (() => DeliveryPolicy);
}
