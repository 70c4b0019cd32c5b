/**
 * The target contract: what a store must offer for the cells to probe it. A target is
 * a module whose `openStore(path, options)` returns the store. Methods may be
 * synchronous or return promises. A cell whose methods a store lacks is SKIPPED with
 * the reason, never failed and never passed.
 *
 * @module
 */

/** A value or a promise of it. */
export type MaybePromise<T> = T | Promise<T>;

/** Options the cells pass to `openStore`. */
export interface StoreOptions {
  /** The leg's journal mode; `undefined` on the default leg. */
  journalMode?: "wal" | "delete";
}

/** A message as the cells write it. */
export interface CellMessage {
  /** The role. */
  role: "system" | "user" | "assistant" | "tool";
  /** The text. */
  content: string;
}

/** A message as the cells read it back. */
export interface StoredMessage {
  /** The row id (strictly increasing in append order). */
  id: number;
  /** The role. */
  role: string;
  /** The text. */
  content: string | null;
  /** `false` once a rewind soft-deleted it (read with `includeInactive`; default `true`). */
  active?: boolean;
}

/** A session as the cells read it back. */
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

/** The store under test. Cell 1 needs the core; the others need their groups. */
export interface Store {
  /** Creates a session, keeping an existing one. (core) */
  createSession(id: string): MaybePromise<unknown>;
  /** Appends a message; returns its id only once it is durable. (core) */
  appendMessage(sessionId: string, message: CellMessage): MaybePromise<number>;
  /**
   * The active messages in id order; with `includeInactive` (cell 4) every row, each
   * with its `active` flag. (core)
   */
  getMessages(
    sessionId: string,
    options?: { includeInactive?: boolean },
  ): MaybePromise<StoredMessage[]>;
  /** Closes the store. (core) */
  close(): MaybePromise<void>;
  /** The store's own invariant check: one line per violation. (optional) */
  checkInvariants?(): MaybePromise<string[]>;
  /** Parks a session for handoff. (cell 2) */
  requestHandoff?(sessionId: string, platform: string): MaybePromise<boolean>;
  /** Claims a pending handoff; `true` for the one winner. (cell 2) */
  claimHandoff?(sessionId: string): MaybePromise<boolean>;
  /** The handoff state. (cell 2) */
  getHandoffState?(sessionId: string): MaybePromise<string | null>;
  /** Reads a session. (cell 3) */
  getSession?(id: string): MaybePromise<StoredSession | undefined>;
  /** Lists every session. (cell 3) */
  listSessions?(): MaybePromise<StoredSession[]>;
  /** Takes the compression lock. (cell 3) */
  tryAcquireCompressionLock?(
    sessionId: string,
    holder: string,
    ttlMs: number,
  ): MaybePromise<boolean>;
  /** Publishes a rotation atomically. (cell 3) */
  publishCompressionChild?(publish: {
    parentId: string;
    childId: string;
    holder: string;
    messages: CellMessage[];
  }): MaybePromise<unknown>;
  /** Releases the compression lock. (cell 3) */
  releaseCompressionLock?(sessionId: string, holder: string): MaybePromise<boolean>;
  /**
   * Rewinds to before a user message: soft-deletes it and every later active row in one
   * transaction, guarded by a compare-and-swap on the active ids (it throws when they
   * differ from `expectedActiveIds`). Returns how many rows it deactivated. (cell 4)
   */
  rewindToMessage?(
    sessionId: string,
    targetId: number,
    options: { expectedActiveIds?: readonly number[] },
  ): MaybePromise<number>;
  /**
   * Forks a branch `newId` holding copies of the active messages up to and including
   * `atMessageId`, in one transaction; the parent is untouched. (cell 4)
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
   * send; returns the new fence, or `null` when the swap lost. (cell 5)
   */
  markAttempting?(id: string, expectedFence: number): MaybePromise<number | null>;
  /** Marks an attempting obligation delivered (compare-and-swap on the fence). (cell 5) */
  markDelivered?(id: string, fence: number): MaybePromise<boolean>;
  /** Marks an open obligation failed, with the reason. (cell 5, optional) */
  markFailed?(id: string, fence: number, reason: string): MaybePromise<boolean>;
  /** Marks an open obligation unknown (maybe sent), with the reason. (cell 5, optional) */
  markUnknown?(id: string, fence: number, reason: string): MaybePromise<boolean>;
  /**
   * Takes over the open obligations of dead processes, atomically across concurrent
   * recoverers: `send` (never attempted: mark attempting, then send), `resend` (maybe
   * sent: send again with `idempotencyKey`, only offered when `idempotentTransport`),
   * `unknown` (maybe sent and not resendable safely: already marked with a reason). (cell 5)
   */
  sweepRecoverable?(
    options: { idempotentTransport?: boolean },
  ): MaybePromise<RecoveredObligationView[]>;
  /** Lists the obligations, oldest first. (cell 5) */
  listObligations?(): MaybePromise<StoredObligation[]>;
  /** Reads one obligation. (cell 5) */
  getObligation?(id: string): MaybePromise<StoredObligation | undefined>;
}

/** A delivery obligation as the cells read it back (cell 5). */
export interface StoredObligation {
  /** The id (also the idempotency key the cells send with). */
  obligationId: string;
  /** The payload. */
  content: string;
  /** `pending`, `attempting`, `delivered`, `failed` or `unknown`. */
  state: string;
  /** The compare-and-swap fence. */
  deliveryFence: number;
  /** Why it is `failed` or `unknown`, or `null`. */
  lastError: string | null;
}

/** What a recoverer must do with an obligation it took over (cell 5). */
export interface RecoveredObligationView {
  /** The obligation after the takeover. */
  obligation: StoredObligation;
  /** `send`, `resend` or `unknown`. */
  action: "send" | "resend" | "unknown";
  /** The key a deduplicating transport uses. */
  idempotencyKey: string;
}

/** A target module. */
export interface TargetModule {
  /** Opens (creating when missing) the store at `path`. */
  openStore(path: string, options: StoreOptions): MaybePromise<Store>;
  /** The crash points the store honours through `SESSION_DB_CRASH_AT`. (optional) */
  crashPoints?(): string[];
}

/** Raised when a target module cannot be loaded or lacks `openStore`. */
export class TargetError extends Error {
  /** Creates the error. */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "TargetError";
  }
}

/**
 * Normalises a target specifier: a path becomes a `file:` URL; URLs stay.
 *
 * @param target A module specifier, URL or file path.
 * @returns The absolute specifier.
 */
export function targetSpecifier(target: string | URL): string {
  if (target instanceof URL) return target.href;
  if (/^(file|https?|data|npm|jsr):/.test(target)) return target;
  const absolute = target.startsWith("/") ? target : `${Deno.cwd()}/${target}`;
  return new URL(`file://${absolute}`).href;
}

/**
 * Imports a target module and checks it exports `openStore`.
 *
 * @param target The module.
 * @returns The module.
 * @throws {TargetError} When it cannot be imported or lacks `openStore`.
 */
export async function loadTarget(target: string | URL): Promise<TargetModule> {
  const specifier = targetSpecifier(target);
  let module: Record<string, unknown>;
  try {
    module = await import(specifier);
  } catch (error) {
    throw new TargetError(
      `Cannot load target module "${specifier}": ${
        error instanceof Error ? error.message.split("\n")[0] : String(error)
      } (check the path or URL, and --allow-import for remote modules)`,
      { cause: error },
    );
  }
  if (typeof module.openStore !== "function") {
    throw new TargetError(
      `Invalid target module "${specifier}": it does not export openStore(path, options) (export a function that opens your store)`,
    );
  }
  return module as unknown as TargetModule;
}

/**
 * Opens a target's store with the leg's journal mode.
 *
 * @param target The module.
 * @param path The database file.
 * @returns The store.
 */
export async function openTargetStore(target: string | URL, path: string): Promise<Store> {
  const module = await loadTarget(target);
  const raw = Deno.env.get("SESSION_DB_JOURNAL_MODE");
  const journalMode = raw === "wal" || raw === "delete" ? raw : undefined;
  return await module.openStore(path, journalMode ? { journalMode } : {});
}
