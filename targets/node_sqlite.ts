/**
 * A target nobody here wrote the storage of: a session store on Deno's built-in
 * `node:sqlite` (the SQLite bundled in Deno, never this project's binding), with every
 * method of every cell, written from the target contract (`cells/contract/target.ts`).
 *
 * Its durability policy: the journal mode is the leg's (`options.journalMode`), else
 * `NODE_SQLITE_JOURNAL_MODE`, else `wal`; `synchronous` is `NODE_SQLITE_SYNCHRONOUS`
 * (`off`, `normal`, `full`, `extra`), else what makes an acknowledged commit survive a
 * power loss: `extra` in DELETE mode (FULL unlinks the journal without syncing its
 * folder), `full` in WAL mode. Every write is one `BEGIN IMMEDIATE` transaction retried
 * while SQLite is busy, up to 30 s, then refused with `BusyDeadlineError`.
 *
 * What the cells rely on, and how it holds here: the handoff claim is one predicated
 * `UPDATE`, its completion fenced by the claimant; the compression lock is taken over
 * when expired or when its holder's `pid=<pid>` is dead, and a rotation checks the lock
 * and writes the child, its messages, the parent's end and the `continuations` row that
 * resume follows, in one transaction; a renewal is one update predicated on the holder
 * and an unexpired lease; a batch of appends is one transaction; a rewind
 * compares the active ids and deactivates in one transaction; the outbox keeps at most
 * once on a plain transport (`_node_sqlite_outbox.ts`). Liveness is `kill(pid, 0)` from
 * the C library (`_liveness.ts`), which the cells' children may load through
 * {@linkcode childPermissions}.
 *
 * @example
 * ```ts
 * import { openStore } from "./node_sqlite.ts";
 * const store = await openStore(`${Deno.makeTempDirSync()}/s.db`, { journalMode: "wal" });
 * await store.createSession("s1");
 * console.log(await store.appendMessage("s1", { role: "user", content: "hi" })); // 1
 * store.close();
 * ```
 *
 * @module
 */
import type {
  CellMessage,
  ChildPermissions,
  RecoveredObligationView,
  StoredMessage,
  StoredObligation,
  StoredSession,
  StoreOptions,
} from "../cells/contract/target.ts";
import {
  CompressionLockError,
  CompressionSessionClosedError,
  Connection,
  holderPid,
  InvalidMessageError,
  processAlive,
  RewindConflictError,
  SessionExistsError,
} from "./_node_sqlite_db.ts";
import { sessionOf, Sessions } from "./_node_sqlite_sessions.ts";
import { Outbox } from "./_node_sqlite_outbox.ts";
import { libcPath } from "./_liveness.ts";

export {
  BusyDeadlineError,
  CompressionLockError,
  CompressionSessionClosedError,
  InvalidMessageError,
  NodeSqliteStoreError,
  RewindConflictError,
  SessionEndedError,
  SessionExistsError,
  SessionNotFoundError,
} from "./_node_sqlite_db.ts";

/** A `PRAGMA synchronous` level. */
export type Synchronous = "off" | "normal" | "full" | "extra";

const SYNCHRONOUS: readonly Synchronous[] = ["off", "normal", "full", "extra"];

/**
 * What the cells' children need beyond their scope: FFI to the C library, whose
 * `kill(pid, 0)` tells a dead lock holder or obligation owner from a live one (Deno's own
 * `Deno.kill` would need --allow-run, which no child gets).
 *
 * @returns The permissions: the C library's path, when this machine has one where looked.
 * @example
 * ```ts
 * import { childPermissions } from "./node_sqlite.ts";
 * console.log(childPermissions().ffi); // e.g. ["/lib/x86_64-linux-gnu/libc.so.6"]
 * ```
 */
export function childPermissions(): ChildPermissions {
  const libc = libcPath();
  return libc ? { ffi: [libc] } : {};
}

/**
 * Raised for a bad durability option.
 *
 * @example
 * ```ts
 * import { NodeSqliteOptionError } from "./node_sqlite.ts";
 * console.log(new NodeSqliteOptionError("x").name); // NodeSqliteOptionError
 * ```
 */
export class NodeSqliteOptionError extends Error {
  /** Creates the error. */
  constructor(message: string) {
    super(message);
    this.name = "NodeSqliteOptionError";
  }
}

/**
 * A variable's value, `undefined` when unset or not readable: the cells' children may read
 * only the variables they are given, and unset is what a child without it means.
 */
function readEnv(name: string): string | undefined {
  if (Deno.permissions.querySync({ name: "env", variable: name }).state !== "granted") {
    return undefined;
  }
  return Deno.env.get(name);
}

/**
 * The durability policy the store will use, from the options and the environment.
 *
 * @param options The leg's journal mode.
 * @returns The journal mode and `synchronous` level.
 * @throws {NodeSqliteOptionError} When an environment value is not one of the levels.
 * @example
 * ```ts
 * import { durabilityPolicy } from "./node_sqlite.ts";
 * console.log(durabilityPolicy({ journalMode: "delete" })); // { journalMode: "delete", synchronous: "extra" }
 * ```
 */
export function durabilityPolicy(
  options: StoreOptions,
): { journalMode: "wal" | "delete"; synchronous: Synchronous } {
  const rawMode = readEnv("NODE_SQLITE_JOURNAL_MODE")?.toLowerCase();
  if (rawMode !== undefined && rawMode !== "wal" && rawMode !== "delete") {
    throw new NodeSqliteOptionError(
      `Invalid NODE_SQLITE_JOURNAL_MODE "${rawMode}": expected wal or delete`,
    );
  }
  const journalMode = options.journalMode ?? rawMode ?? "wal";
  const rawSync = readEnv("NODE_SQLITE_SYNCHRONOUS")?.toLowerCase();
  if (rawSync !== undefined && !SYNCHRONOUS.includes(rawSync as Synchronous)) {
    throw new NodeSqliteOptionError(
      `Invalid NODE_SQLITE_SYNCHRONOUS "${rawSync}": expected one of ${SYNCHRONOUS.join(", ")}`,
    );
  }
  const synchronous = (rawSync as Synchronous | undefined) ??
    (journalMode === "delete" ? "extra" : "full");
  return { journalMode, synchronous };
}

type Row = Record<string, unknown>;
const text = (value: unknown) => value === null || value === undefined ? null : String(value);

function sameIds(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((id, i) => id === b[i]);
}

/**
 * The store on `node:sqlite`.
 *
 * @example
 * ```ts
 * import { NodeSqliteStore } from "./node_sqlite.ts";
 * const store = await NodeSqliteStore.open(`${Deno.makeTempDirSync()}/s.db`, {});
 * console.log(await store.checkInvariants()); // []
 * store.close();
 * ```
 */
export class NodeSqliteStore {
  readonly #c: Connection;
  readonly #outbox: Outbox;
  readonly #sessions: Sessions;
  /** The handoffs this store claimed, with the claim's fence. */
  readonly #claims = new Map<string, number>();

  private constructor(connection: Connection) {
    this.#c = connection;
    this.#outbox = new Outbox(connection);
    this.#sessions = new Sessions(connection);
  }

  /**
   * Opens (creating) the store.
   *
   * @param path The database file.
   * @param options The leg's journal mode.
   * @returns The store.
   */
  static async open(path: string, options: StoreOptions): Promise<NodeSqliteStore> {
    const policy = durabilityPolicy(options);
    return new NodeSqliteStore(await Connection.open(path, policy.journalMode, policy.synchronous));
  }

  #session(id: string): Row | undefined {
    return this.#sessions.row(id);
  }

  #existing(id: string): Row {
    return this.#sessions.existing(id);
  }

  /** Creates a session, keeping an existing one. */
  createSession(id: string): Promise<void> {
    return this.#c.write("create a session", () => {
      this.#c.db.prepare("INSERT INTO sessions (id) VALUES (?) ON CONFLICT(id) DO NOTHING").run(id);
    });
  }

  /** Appends a message; returns its id once committed. */
  appendMessage(sessionId: string, message: CellMessage): Promise<number> {
    return this.#c.write("append a message", () => {
      this.#sessions.writable(sessionId);
      return this.#sessions.insert(sessionId, message);
    });
  }

  /** Appends messages in one transaction, all or nothing; their ids once committed. */
  appendMessages(sessionId: string, messages: CellMessage[]): Promise<number[]> {
    return this.#sessions.appendMessages(sessionId, messages);
  }

  /** The number of active messages of a session. */
  messageCount(sessionId: string): Promise<number> {
    return this.#sessions.messageCount(sessionId);
  }

  /** Ends a session: `true` when this call ended it; the first reason stays. */
  endSession(id: string, reason: string): Promise<boolean> {
    return this.#sessions.endSession(id, reason);
  }

  /** Reopens an ended session; one rotated into a continuation is refused. */
  reopenSession(id: string): Promise<boolean> {
    return this.#sessions.reopenSession(id);
  }

  /** The session, created when missing. */
  ensureSession(id: string): Promise<StoredSession> {
    return this.#sessions.ensureSession(id);
  }

  /** The active messages in id order; with `includeInactive`, every row with its flag. */
  getMessages(
    sessionId: string,
    options: { includeInactive?: boolean } = {},
  ): Promise<StoredMessage[]> {
    const sql = options.includeInactive
      ? "SELECT id, role, content, active FROM messages WHERE session_id = ? ORDER BY id"
      : "SELECT id, role, content, active FROM messages WHERE session_id = ? AND active = 1 ORDER BY id";
    return this.#c.read(
      "read the messages",
      () =>
        this.#c.db.prepare(sql).all(sessionId).map((row) => ({
          id: Number(row.id),
          role: String(row.role),
          content: text(row.content),
          active: Number(row.active) === 1,
        })),
    );
  }

  /** Reads a session, `undefined` when unknown. */
  getSession(id: string): Promise<StoredSession | undefined> {
    return this.#c.read("read a session", () => {
      const row = this.#session(id);
      return row ? sessionOf(row) : undefined;
    });
  }

  /** Every session. */
  listSessions(): Promise<StoredSession[]> {
    return this.#c.read(
      "list the sessions",
      () => this.#c.db.prepare("SELECT * FROM sessions ORDER BY id").all().map(sessionOf),
    );
  }

  /** Parks a session for handoff: `false`, changing nothing, when one is pending or running. */
  requestHandoff(sessionId: string, platform: string): Promise<boolean> {
    return this.#c.write("request a handoff", () => {
      this.#existing(sessionId);
      return this.#c.db.prepare(
        "UPDATE sessions SET handoff_state = 'pending', handoff_platform = ?, handoff_claimant = NULL, handoff_error = NULL WHERE id = ? AND (handoff_state IS NULL OR handoff_state IN ('completed', 'failed'))",
      ).run(platform, sessionId).changes === 1;
    });
  }

  /** Claims a pending handoff: one predicated update, so exactly one racer wins. */
  async claimHandoff(sessionId: string): Promise<boolean> {
    const fence = await this.#c.write("claim a handoff", () => {
      const won = this.#c.db.prepare(
        "UPDATE sessions SET handoff_state = 'running', handoff_claimant = ?, handoff_fence = handoff_fence + 1 WHERE id = ? AND handoff_state = 'pending'",
      ).run(Deno.pid, sessionId).changes === 1;
      return won ? Number(this.#session(sessionId)!.handoff_fence) : null;
    });
    if (fence === null) return false;
    this.#claims.set(sessionId, fence);
    return true;
  }

  /** Completes the running handoff this process claimed: `false` when it is not, or not ours. */
  completeHandoff(sessionId: string): Promise<boolean> {
    const fence = this.#claims.get(sessionId) ?? null;
    return this.#c.write("complete a handoff", () =>
      this.#c.db.prepare(
        "UPDATE sessions SET handoff_state = 'completed' WHERE id = ? AND handoff_state = 'running' AND handoff_claimant = ? AND (?3 IS NULL OR handoff_fence = ?3)",
      ).run(sessionId, Deno.pid, fence).changes === 1);
  }

  /** Fails a pending or running handoff, with the reason (the takeover of a stalled claim). */
  failHandoff(sessionId: string, error: string): Promise<boolean> {
    return this.#c.write("fail a handoff", () =>
      this.#c.db.prepare(
        "UPDATE sessions SET handoff_state = 'failed', handoff_error = ? WHERE id = ? AND handoff_state IN ('pending', 'running')",
      ).run(error, sessionId).changes === 1);
  }

  /** The handoff state, or `null`. */
  async getHandoffState(sessionId: string): Promise<string | null> {
    return (await this.getSession(sessionId))?.handoffState ?? null;
  }

  /** Takes the compression lock: free, ours, expired, or held by a dead process. */
  tryAcquireCompressionLock(sessionId: string, holder: string, ttlMs: number): Promise<boolean> {
    return this.#c.write("take the compression lock", () => {
      const now = Date.now();
      const lock = this.#c.db.prepare("SELECT * FROM compression_locks WHERE session_id = ?")
        .get(sessionId);
      if (lock && lock.holder !== holder && Number(lock.expires_at) > now) {
        const pid = holderPid(String(lock.holder));
        if (pid === undefined || processAlive(pid)) return false;
      }
      this.#c.db.prepare(
        "INSERT INTO compression_locks (session_id, holder, expires_at) VALUES (?, ?, ?) ON CONFLICT(session_id) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at",
      ).run(sessionId, holder, now + ttlMs);
      return true;
    });
  }

  /**
   * Publishes a rotation in one transaction, under the lock checked in it: the child with
   * its messages, the parent ended by compression. Returns the child.
   */
  publishCompressionChild(publish: {
    parentId: string;
    childId: string;
    holder: string;
    messages: CellMessage[];
  }): Promise<StoredSession> {
    const { parentId, childId, holder, messages } = publish;
    return this.#c.write("publish a rotation", () => {
      const lock = this.#c.db.prepare("SELECT * FROM compression_locks WHERE session_id = ?")
        .get(parentId);
      if (!lock || lock.holder !== holder) {
        throw new CompressionLockError(
          `Cannot publish the rotation of "${parentId}": ${holder} does not hold its compression lock`,
        );
      }
      if (Number(lock.expires_at) <= Date.now()) {
        throw new CompressionLockError(
          `Cannot publish the rotation of "${parentId}": the lease of ${holder} expired`,
        );
      }
      const parent = this.#existing(parentId);
      if (parent.ended_at !== null) {
        throw new CompressionSessionClosedError(
          `Cannot publish the rotation of "${parentId}": it ended (${parent.end_reason})`,
        );
      }
      if (this.#session(childId)) {
        throw new SessionExistsError(`Cannot publish "${childId}": the session exists`);
      }
      this.#c.db.prepare("INSERT INTO sessions (id, parent_session_id) VALUES (?, ?)")
        .run(childId, parentId);
      const insert = this.#c.db.prepare(
        "INSERT INTO messages (session_id, role, content) VALUES (?, ?, ?)",
      );
      for (const message of messages) insert.run(childId, message.role, message.content);
      this.#c.db.prepare("INSERT INTO continuations (parent_id, child_id) VALUES (?, ?)")
        .run(parentId, childId);
      this.#c.db.prepare(
        "UPDATE sessions SET ended_at = ?, end_reason = 'compression' WHERE id = ? AND ended_at IS NULL",
      ).run(Date.now() / 1000, parentId);
      return sessionOf(this.#session(childId)!);
    });
  }

  /** Releases the lock `holder` holds: `false`, changing nothing, when it holds none. */
  releaseCompressionLock(sessionId: string, holder: string): Promise<boolean> {
    return this.#c.write(
      "release the compression lock",
      () =>
        this.#c.db.prepare("DELETE FROM compression_locks WHERE session_id = ? AND holder = ?")
          .run(sessionId, holder).changes === 1,
    );
  }

  /** Extends the lock `holder` holds while its lease lasts: `false`, changing nothing, else. */
  refreshCompressionLock(sessionId: string, holder: string, ttlMs: number): Promise<boolean> {
    return this.#sessions.refreshCompressionLock(sessionId, holder, ttlMs);
  }

  /** The one live tip of a session's compression chain. */
  resolveResumeSessionId(sessionId: string): Promise<string> {
    return this.#sessions.resolveResumeSessionId(sessionId);
  }

  /** The open continuation of a rotated session, or `undefined`. */
  findLiveCompressionChild(parentId: string): Promise<StoredSession | undefined> {
    return this.#sessions.findLiveCompressionChild(parentId);
  }

  /** Reopens a rotation's parent left without a continuation, unless a live holder locks it. */
  reopenOrphanedCompressionSession(sessionId: string): Promise<boolean> {
    return this.#sessions.reopenOrphanedCompressionSession(sessionId);
  }

  /** The handoffs requested and not yet claimed, each once, oldest first. */
  listPendingHandoffs(): Promise<StoredSession[]> {
    return this.#sessions.listPendingHandoffs();
  }

  /**
   * Rewinds to before a user message, in one transaction: when the active ids are not
   * `expectedActiveIds`, {@linkcode RewindConflictError} and nothing changes. Returns how
   * many rows it deactivated.
   */
  rewindToMessage(
    sessionId: string,
    targetId: number,
    options: { expectedActiveIds?: readonly number[] } = {},
  ): Promise<number> {
    return this.#c.write("rewind", () => {
      this.#existing(sessionId);
      const target = this.#c.db.prepare(
        "SELECT role, active FROM messages WHERE id = ? AND session_id = ?",
      ).get(targetId, sessionId);
      if (!target || target.role !== "user" || Number(target.active) !== 1) {
        throw new InvalidMessageError(
          `Cannot rewind "${sessionId}" to message ${targetId}: not an active user message of it`,
        );
      }
      const active = this.#c.db.prepare(
        "SELECT id FROM messages WHERE session_id = ? AND active = 1 ORDER BY id",
      ).all(sessionId).map((row) => Number(row.id));
      const expected = options.expectedActiveIds;
      if (expected && !sameIds(active, expected)) {
        throw new RewindConflictError(
          `Cannot rewind "${sessionId}": its active messages are ${JSON.stringify(active)}, not ${
            JSON.stringify(expected)
          }`,
        );
      }
      const changed = this.#c.db.prepare(
        "UPDATE messages SET active = 0 WHERE session_id = ? AND active = 1 AND id >= ?",
      ).run(sessionId, targetId).changes;
      this.#c.db.prepare("UPDATE sessions SET rewind_count = rewind_count + 1 WHERE id = ?")
        .run(sessionId);
      return Number(changed);
    });
  }

  /**
   * Forks `newId` from the active messages of `sessionId` up to and including
   * `atMessageId` (copies with new ids), in one transaction; the parent is untouched.
   */
  forkSession(sessionId: string, atMessageId: number, newId: string): Promise<StoredSession> {
    return this.#c.write("fork", () => {
      this.#existing(sessionId);
      const at = this.#c.db.prepare(
        "SELECT 1 FROM messages WHERE id = ? AND session_id = ? AND active = 1",
      ).get(atMessageId, sessionId);
      if (!at) {
        throw new InvalidMessageError(
          `Cannot fork "${sessionId}" at message ${atMessageId}: not an active message of it`,
        );
      }
      if (this.#session(newId)) {
        throw new SessionExistsError(`Cannot fork into "${newId}": the session exists`);
      }
      this.#c.db.prepare("INSERT INTO sessions (id, parent_session_id) VALUES (?, ?)")
        .run(newId, sessionId);
      this.#c.db.prepare(
        "INSERT INTO messages (session_id, role, content) SELECT ?, role, content FROM messages WHERE session_id = ? AND active = 1 AND id <= ? ORDER BY id",
      ).run(newId, sessionId, atMessageId);
      return sessionOf(this.#session(newId)!);
    });
  }

  /** Records a pending obligation owned by this process; recording it again is a no-op. */
  recordObligation(
    obligation: { sessionId: string; messageRef: string; content: string },
  ): Promise<StoredObligation> {
    return this.#outbox.record(obligation);
  }

  /** Pending → attempting under the fence: the new fence, or `null`. */
  markAttempting(id: string, expectedFence: number): Promise<number | null> {
    return this.#outbox.markAttempting(id, expectedFence);
  }

  /** Attempting → delivered under exactly this fence. */
  markDelivered(id: string, fence: number): Promise<boolean> {
    return this.#outbox.markDelivered(id, fence);
  }

  /** Pending or attempting → failed, with the reason, under this fence. */
  markFailed(id: string, fence: number, reason: string): Promise<boolean> {
    return this.#outbox.settle(id, fence, "failed", reason);
  }

  /** Pending or attempting → unknown (maybe sent), with the reason, under this fence. */
  markUnknown(id: string, fence: number, reason: string): Promise<boolean> {
    return this.#outbox.settle(id, fence, "unknown", reason);
  }

  /** Takes over the dead processes' open obligations, in one transaction. */
  sweepRecoverable(
    options: { idempotentTransport?: boolean } = {},
  ): Promise<RecoveredObligationView[]> {
    return this.#outbox.sweep(options);
  }

  /** Every obligation, oldest first. */
  listObligations(): Promise<StoredObligation[]> {
    return this.#outbox.list();
  }

  /** One obligation, or `undefined`. */
  getObligation(id: string): Promise<StoredObligation | undefined> {
    return this.#outbox.get(id);
  }

  /**
   * `PRAGMA integrity_check` and foreign keys, and the store's own invariants: a session
   * ended by compression has its continuation, a failed handoff and a settled obligation
   * their reason. One line per violation.
   */
  checkInvariants(): Promise<string[]> {
    return this.#c.read("check the invariants", () => {
      const all = (sql: string) => this.#c.db.prepare(sql).all();
      const problems: string[] = [];
      for (const row of all("PRAGMA integrity_check")) {
        const line = String(Object.values(row)[0]);
        if (line !== "ok") problems.push(`integrity_check: ${line}`);
      }
      for (const row of all("PRAGMA foreign_key_check")) {
        problems.push(`foreign_key_check: ${JSON.stringify(row)}`);
      }
      for (
        const row of all(
          "SELECT id FROM sessions p WHERE end_reason = 'compression' AND NOT EXISTS (SELECT 1 FROM continuations c WHERE c.parent_id = p.id)",
        )
      ) {
        problems.push(`session ${row.id} ended by compression without its continuation`);
      }
      return [...problems, ...this.#outbox.problems()];
    });
  }

  /** Closes the store. */
  close(): void {
    this.#c.close();
  }
}

/**
 * Opens the store (the target contract's entry point).
 *
 * @param path The database file.
 * @param options The leg's journal mode.
 * @returns The store.
 * @example
 * ```ts
 * import { openStore } from "./node_sqlite.ts";
 * const store = await openStore(`${Deno.makeTempDirSync()}/s.db`, {});
 * store.close();
 * ```
 */
export function openStore(path: string, options: StoreOptions): Promise<NodeSqliteStore> {
  return NodeSqliteStore.open(path, options);
}
