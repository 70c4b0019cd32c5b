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
 * | 4 fork determinism | `getMessages` (with `includeInactive`), `rewindToMessage`, `forkSession` | `getSession`, `checkInvariants`; `appendMessages` (the long fork); `crashPoints()` named `rewindToMessage:*` and `forkSession:*` |
 * | 5 outbox exactly-once | `recordObligation`, `markAttempting`, `markDelivered`, `sweepRecoverable`, `listObligations` | `checkInvariants`; the target's `deliveryPolicy`; `getObligation`; `markUnknown` or `markFailed` (an obligation settled while an attempt of it is stopped); `crashPoints()` named `recordObligation:afterCommit`, `markAttempting:afterCommit` and `sweepRecoverable:afterClaim` |
 * | 6 concurrent writers | `getMessages` | `checkInvariants`; `recordObligation` + `listObligations` (the cron role's outbox); `listSessions` + the cell 3 lock methods (its rotations) |
 * | 7 fenced ownership | `getMessages`, `listSessions`, `tryAcquireCompressionLock`, `publishCompressionChild`, `releaseCompressionLock` | `checkInvariants`; `requestHandoff` + `claimHandoff` + `completeHandoff` + `failHandoff` + `getHandoffState` (the claimed handoff); `recordObligation` + `markAttempting` + `markDelivered` + `markUnknown` + `getObligation` (the outbox attempt) |
 * | 8 resume resolution | cell 3's, and `resolveResumeSessionId` | `checkInvariants`; `findLiveCompressionChild`; `reopenOrphanedCompressionSession` (else the store's own recovery must reopen an orphan); `endSession` (the live holder); `reopenSession` and `endSession` (the stop series of a reopen while another process reopens and rotates) |
 * | 9 batch atomicity | `getMessages`, `appendMessages` | `checkInvariants`; `messageCount`; `crashPoints()` named `appendMessages:*` |
 * | 10 ends and reopens | `getMessages`, `endSession`, `reopenSession`, `ensureSession` | `checkInvariants`; `getSession` |
 * | 11 lease renewal | cell 3's, and `refreshCompressionLock` | `checkInvariants` |
 * | 12 pending handoffs | cell 2's, and `listPendingHandoffs` | `checkInvariants` |
 * | 13 checkpoint validity | `getMessages` | `checkInvariants`; `forkSession`; the target's `plantViolation` (the states found on disk) |
 *
 * What the cells rely on beyond the method shapes:
 *
 * - **Durability**: a method returns (or its promise resolves) only once its effect is
 *   committed; each operation is atomic. Another process reads a write as soon as it
 *   returned (cell 2, after `requestHandoff`), a process that read before too (no cache of
 *   its own: cell 6), and a process killed then, with no further
 *   call and no close, keeps it (cells 1 to 5: after `createSession`, `claimHandoff`,
 *   `releaseCompressionLock`, `publishCompressionChild`, `rewindToMessage`, `forkSession`,
 *   `markDelivered`, `sweepRecoverable`).
 * - **Messages** read back as appended: the text byte for byte (a text the store cannot keep
 *   is refused with an error of its own class, changing nothing) and the role as given (the
 *   contract's four: `system`, `user`, `assistant`, `tool`; a `tool` or `system` turn the
 *   store cannot take alone may be refused so too), in a fork's and a rotation's copies too.
 * - **Message ids** are numbers (safe integers, below 2^53: a store with 64-bit ids answers
 *   each minus a fixed base), unique across the whole store (a fork's copies get new ids)
 *   and strictly increasing in append order; `getMessages` returns them in id order. Integers answered as bigints (libSQL's rowids) or as decimal strings (an
 *   int64 in protobuf's JSON) are read as numbers; states and actions in another case
 *   (`PENDING`) as the contract names them; `0` and `1` where the contract has a
 *   boolean (a message's `active` as SQLite stores it, a guarded write's rows changed) as
 *   `false` and `true`; a `null` or a not-found error (`SessionNotFoundError`, `ENOENT`,
 *   any name with `NotFound` in it) from `getSession`, `getObligation` or
 *   `findLiveCompressionChild` as none; and a value left out where the contract's none is
 *   `null` (a session's `parentSessionId`, `endedAt`, `endReason` and `handoffState`;
 *   `markAttempting`'s and `getHandoffState`'s answer) as `null`.
 * - **Typed errors**, recognised by their `name` (an error of a class of the store's own
 *   whose `name` was left `Error` is named by its class): an append to a session ended by a
 *   compression rotation throws `CompressionSessionClosedError`; a rewind whose
 *   `expectedActiveIds` differ from the active ids throws `RewindConflictError` and
 *   changes nothing.
 * - **Journal mode**: `options.journalMode` is the leg (`"wal"`, `"delete"`, or absent
 *   on the default leg). The mode the writer ran in is observed on disk at every kill
 *   (and in the leg probe, killed while the store is open): a leg with any observation
 *   in another mode is SKIPPED with the observations, never counted as evidence. A
 *   store whose file is not SQLite (or that keeps its data elsewhere) runs on the
 *   default leg only; the other legs SKIP as not applicable.
 * - **Files**: each store gets a folder of its own (no other store shares it, and none of
 *   the suite's own files are in it), and `path` in it. The store may keep its data at
 *   `path`, in files or folders beside it (a journal, a WAL, a log or a data folder named
 *   its own way) or in a folder it makes at `path` (a LevelDB-like layout): the tiers
 *   copy, damage and judge everything in that folder as the store's.
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
 *   one); each sweep takes every owed obligation it sees (one transaction: only one of them
 *   claims anything). Two later boots claim nothing, send nothing and change nothing in the
 *   store's folder (every file beside the database too; SQLite's `-shm`, and an empty `-wal`
 *   or `-journal`, aside). After all that, the store takes a new life's obligations and
 *   recovers them too.
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
 *   one. Only `env`, `sys`, `ffi`, `read`, `run` and `signals` exist: net and write are
 *   never granted. `signals: true` lets the store signal processes it did not start
 *   (`Deno.kill`, such as a check that a lock's holder is alive), which Deno grants only
 *   with an unscoped `--allow-run`. A store call that Deno refuses in a child (`NotCapable`)
 *   ends that cell in ERROR naming the permission, never in a FAIL of the store.
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
export type { DeliveryPolicy } from "../../session_db/delivery_policy.ts";
export { DELIVERY_POLICIES } from "../../session_db/delivery_policy.ts";
import type { Store } from "./store.ts";
export type {
  CellMessage,
  MaybePromise,
  RecoveredObligationView,
  SchemaViolation,
  Store,
  StoredMessage,
  StoredObligation,
  StoredSession,
  StoreOptions,
  TargetModule,
} from "./store.ts";

/**
 * A store method name.
 *
 * @example
 * ```ts
 * import { CELL_METHODS, type CellNumber, type Store, type StoreMethod } from "./target.ts";
 * function missing(store: Store, cell: CellNumber): StoreMethod[] {
 *   return CELL_METHODS[cell].filter((method) => typeof store[method] !== "function");
 * }
 * ```
 */
export type StoreMethod = keyof Store & string;

/**
 * Every method of the contract, once each (the type keeps the list whole): a store that
 * answers one without listing it among its own keys (a `Proxy`) still has it.
 *
 * @example
 * ```ts
 * import { STORE_METHODS } from "./target.ts";
 * console.log(STORE_METHODS.includes("appendMessage")); // true
 * ```
 */
export const STORE_METHODS: readonly StoreMethod[] = Object.keys(
  {
    appendMessage: 1,
    appendMessages: 1,
    checkInvariants: 1,
    claimHandoff: 1,
    close: 1,
    completeHandoff: 1,
    createSession: 1,
    endSession: 1,
    ensureSession: 1,
    failHandoff: 1,
    findLiveCompressionChild: 1,
    forkSession: 1,
    getHandoffState: 1,
    getMessages: 1,
    getObligation: 1,
    getSession: 1,
    listObligations: 1,
    listPendingHandoffs: 1,
    listSessions: 1,
    markAttempting: 1,
    markDelivered: 1,
    markFailed: 1,
    markUnknown: 1,
    messageCount: 1,
    publishCompressionChild: 1,
    recordObligation: 1,
    refreshCompressionLock: 1,
    releaseCompressionLock: 1,
    reopenOrphanedCompressionSession: 1,
    reopenSession: 1,
    requestHandoff: 1,
    resolveResumeSessionId: 1,
    rewindToMessage: 1,
    sweepRecoverable: 1,
    tryAcquireCompressionLock: 1,
  } satisfies Record<StoreMethod, 1>,
) as StoreMethod[];

/**
 * The methods a store has: every function among its keys (its prototypes' too), and every
 * contract method it answers without listing it (a `Proxy`).
 *
 * @param store The open store.
 * @returns The names, once each.
 * @example
 * ```ts
 * import { methodsOf } from "./target.ts";
 * console.log(methodsOf({ createSession() {}, close() {} })); // ["createSession", "close"]
 * ```
 */
export function methodsOf(store: object): string[] {
  const methods = new Set<string>();
  const member = (name: string) => (store as Record<string, unknown>)[name];
  for (let o: object | null = store; o && o !== Object.prototype; o = Object.getPrototypeOf(o)) {
    for (const name of Object.getOwnPropertyNames(o)) {
      if (name !== "constructor" && typeof member(name) === "function") methods.add(name);
    }
  }
  for (const name of STORE_METHODS) if (typeof member(name) === "function") methods.add(name);
  return [...methods];
}

/**
 * A cell's number: one per clause of the contract.
 *
 * @example
 * ```ts
 * import { CELL_METHODS, type CellNumber } from "./target.ts";
 * const cells = Object.keys(CELL_METHODS).map(Number) as CellNumber[];
 * console.log(cells.length); // 13
 * ```
 */
export type CellNumber = keyof typeof CELL_METHODS;

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
export const CELL_METHODS: Readonly<
  Record<1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 | 9 | 10 | 11 | 12 | 13, readonly StoreMethod[]>
> = {
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
  8: [...ROTATION_METHODS, "resolveResumeSessionId"],
  9: ["createSession", "appendMessage", "appendMessages", "getMessages", "close"],
  10: [
    "createSession",
    "appendMessage",
    "getMessages",
    "endSession",
    "reopenSession",
    "ensureSession",
    "close",
  ],
  11: [...ROTATION_METHODS, "refreshCompressionLock"],
  12: [
    "createSession",
    "requestHandoff",
    "claimHandoff",
    "getHandoffState",
    "listPendingHandoffs",
    "close",
  ],
  13: ["createSession", "appendMessage", "getMessages", "close"],
};

/**
 * Each cell's short title, by cell number: the one name a cell goes by in its test's
 * name, its report and the runner's tables (a power-loss cell is `power-loss <title>`).
 *
 * @example
 * ```ts
 * import { CELL_TITLES } from "./target.ts";
 * console.log(`cell 5 ${CELL_TITLES[5]}`); // cell 5 delivery outbox exactly-once
 * ```
 */
export const CELL_TITLES: Readonly<Record<CellNumber, string>> = {
  1: "prefix durability",
  2: "consume-once",
  3: "rotation atomicity",
  4: "fork determinism",
  5: "delivery outbox exactly-once",
  6: "concurrent writers",
  7: "fenced ownership",
  8: "resume resolution",
  9: "batch atomicity",
  10: "ends and reopens",
  11: "lease renewal",
  12: "pending handoffs",
  13: "checkpoint validity",
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
  Partial<Record<keyof typeof CELL_METHODS, readonly StoreMethod[]>>
> = {
  7: ["completeHandoff", "failHandoff", "markUnknown", "markDelivered"],
  8: [
    "findLiveCompressionChild",
    "reopenOrphanedCompressionSession",
    "reopenSession",
    "endSession",
  ],
  9: ["messageCount"],
  13: ["forkSession", "checkInvariants"],
};
