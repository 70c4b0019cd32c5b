/**
 * A correct but different session store, written against the target contract only: it
 * must pass every cell, so that a cell failing on it is a false alarm (a cell
 * over-specific to the reference store), not a bug here.
 *
 * What differs from the reference `SessionDB`: its own schema (conversations and
 * entries, soft delete by a `deleted_at` stamp, version in `PRAGMA user_version`);
 * no counters (counts are derived); a handoff that is an append-only event table whose
 * claim is an INSERT made unique by the primary key instead of a predicated UPDATE; a
 * rotation lease that closes the parent before it opens the child (one transaction);
 * an outbox with its own phases (`queued`, `in_flight`, `done`, `gave_up`,
 * `maybe_sent`), random ids made idempotent by a UNIQUE constraint, and a fence bumped
 * on every takeover; SQLite's busy handler instead of a retry loop (but for the journal-mode
 * switch, whose busy SQLite never hands to it); DELETE mode unless
 * WAL is asked for and the library is at least 3.51.3; millisecond integer times; async
 * methods; its own liveness probe and crash points.
 *
 * @example
 * ```ts
 * import { AltStore } from "./alt_store.ts";
 * const store = await AltStore.open(`${Deno.makeTempDirSync()}/alt.db`, {});
 * await store.createSession("s");
 * console.log(await store.appendMessage("s", { role: "user", content: "hi" })); // 1
 * await store.close();
 * ```
 *
 * @module
 */
import {
  Database,
  SQLITE_BUSY,
  SqliteError,
  sqliteVersion,
  type Statement,
} from "../../../session_db/sqlite/mod.ts";
import type {
  CellMessage,
  RecoveredObligationView,
  Store,
  StoredMessage,
  StoredObligation,
  StoredSession,
  StoreOptions,
} from "../../contract/target.ts";
import { alive, crashPoint } from "./_os.ts";

/** The crash points the store honours through `SESSION_DB_CRASH_AT`. */
export const ALT_CRASH_POINTS: readonly string[] = [
  "claimHandoff:afterCommit",
  "publishCompressionChild:afterParentClosed",
  "publishCompressionChild:afterChildOpened",
  "publishCompressionChild:afterCommit",
  "rewindToMessage:afterCheck",
  "rewindToMessage:afterSoftDelete",
  "rewindToMessage:afterCommit",
  "forkSession:afterBranch",
  "forkSession:afterCopy",
  "forkSession:afterCommit",
  "recordObligation:afterCommit",
  "markAttempting:afterCommit",
];

/** Raised on an append to (or a rewind of) a conversation closed by a compression rotation. */
export class CompressionSessionClosedError extends Error {
  /** Creates the error. */
  constructor(message: string) {
    super(message);
    this.name = "CompressionSessionClosedError";
  }
}

/** Raised when a rewind's expected active ids are not the current ones. */
export class RewindConflictError extends Error {
  /** Creates the error. */
  constructor(message: string) {
    super(message);
    this.name = "RewindConflictError";
  }
}

/** Raised on any other refused operation. */
export class AltStoreError extends Error {
  /** Creates the error. */
  constructor(message: string) {
    super(message);
    this.name = "AltStoreError";
  }
}

const SCHEMA = `
CREATE TABLE conversation (
  conv_key TEXT PRIMARY KEY,
  opened_ms INTEGER NOT NULL,
  closed_ms INTEGER,
  close_cause TEXT,
  origin_key TEXT REFERENCES conversation(conv_key),
  origin_kind TEXT CHECK (origin_kind IN ('rotation', 'fork')),
  CHECK ((closed_ms IS NULL) = (close_cause IS NULL)),
  CHECK ((origin_key IS NULL) = (origin_kind IS NULL))
);
CREATE INDEX conversation_origin ON conversation(origin_key);
CREATE TABLE entry (
  seq INTEGER PRIMARY KEY,
  conv_key TEXT NOT NULL REFERENCES conversation(conv_key),
  speaker TEXT NOT NULL CHECK (speaker IN ('system', 'user', 'assistant', 'tool')),
  body TEXT,
  written_ms INTEGER NOT NULL,
  deleted_at INTEGER
);
CREATE INDEX entry_by_conversation ON entry(conv_key, seq);
CREATE TABLE handoff_event (
  conv_key TEXT NOT NULL REFERENCES conversation(conv_key),
  round INTEGER NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('parked', 'claimed', 'completed')),
  platform TEXT,
  at_ms INTEGER NOT NULL,
  PRIMARY KEY (conv_key, round, kind)
) WITHOUT ROWID;
CREATE TABLE rotation_lease (
  conv_key TEXT PRIMARY KEY REFERENCES conversation(conv_key),
  owner TEXT NOT NULL,
  until_ms INTEGER NOT NULL
);
CREATE TABLE delivery (
  n INTEGER PRIMARY KEY,
  key TEXT NOT NULL UNIQUE,
  conv_key TEXT NOT NULL REFERENCES conversation(conv_key),
  ref TEXT NOT NULL,
  payload TEXT NOT NULL,
  phase TEXT NOT NULL CHECK (phase IN ('queued', 'in_flight', 'done', 'gave_up', 'maybe_sent')),
  fence INTEGER NOT NULL DEFAULT 0,
  owner_pid INTEGER NOT NULL,
  note TEXT,
  UNIQUE (conv_key, ref, payload)
);
PRAGMA user_version = 1;
`;

/** The contract's obligation states, by this store's phases. */
const STATE_OF_PHASE: Record<string, string> = {
  queued: "pending",
  in_flight: "attempting",
  done: "delivered",
  gave_up: "failed",
  maybe_sent: "unknown",
};

type ConversationRow = {
  conv_key: string;
  closed_ms: number | null;
  close_cause: string | null;
  origin_key: string | null;
};
type DeliveryRow = {
  key: string;
  payload: string;
  phase: string;
  fence: number;
  owner_pid: number;
  note: string | null;
};

/** WAL only where the WAL-reset bug is fixed (3.51.3); no backports considered. */
function walSafe(version: string): boolean {
  const [major = 0, minor = 0, patch = 0] = version.split(".").map(Number);
  return major * 1_000_000 + minor * 1_000 + patch >= 3_051_003;
}

const BUSY_TIMEOUT_MS = 15_000;

/**
 * Sets the journal mode, waiting while another connection holds the file. SQLite answers
 * the switch's busy at once instead of calling the busy handler (the switch upgrades a
 * read transaction, and waiting there could deadlock two connections), so two processes
 * opening a new file together would otherwise fail one of them.
 */
async function switchJournalMode(db: Database, path: string, want: string): Promise<void> {
  const deadline = Date.now() + BUSY_TIMEOUT_MS;
  const ask = (sql: string) => {
    using pragma = db.prepare(sql);
    return String(pragma.value<[string]>()?.[0]).toLowerCase();
  };
  for (let pauseMs = 5;; pauseMs = Math.min(pauseMs * 2, 200)) {
    try {
      if (ask("PRAGMA journal_mode") === want) return;
      const got = ask(`PRAGMA journal_mode = ${want}`);
      if (got === want) return;
      throw new AltStoreError(
        `Cannot open "${path}": journal mode ${want} was requested but SQLite kept ${got} (close the other connections and retry)`,
      );
    } catch (error) {
      const busy = error instanceof SqliteError && error.code === SQLITE_BUSY;
      if (!busy || Date.now() >= deadline) throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, pauseMs));
  }
}

function pidIn(owner: string): number | undefined {
  const match = /pid=(\d+)/.exec(owner);
  return match ? Number(match[1]) : undefined;
}

function toObligation(row: DeliveryRow): StoredObligation {
  return {
    obligationId: row.key,
    content: row.payload,
    state: STATE_OF_PHASE[row.phase] ?? row.phase,
    deliveryFence: row.fence,
    lastError: row.note,
  };
}

function toSession(row: ConversationRow): StoredSession {
  return {
    id: row.conv_key,
    parentSessionId: row.origin_key,
    endedAt: row.closed_ms,
    endReason: row.close_cause,
  };
}

/**
 * The alternative store. Open it with {@linkcode AltStore.open}.
 *
 * @example
 * ```ts
 * import { AltStore } from "./alt_store.ts";
 * const store = await AltStore.open(`${Deno.makeTempDirSync()}/alt.db`, { journalMode: "delete" });
 * await store.close();
 * ```
 */
export class AltStore implements Store {
  #db: Database;
  #statements = new Map<string, Statement>();

  private constructor(db: Database) {
    this.#db = db;
  }

  /**
   * Opens (creating when missing) a store.
   *
   * @param path The database file.
   * @param options The journal mode; DELETE when absent, and when WAL is unsafe.
   * @returns The store.
   */
  static async open(path: string, options: StoreOptions): Promise<AltStore> {
    const db = new Database(path);
    try {
      db.setBusyTimeout(BUSY_TIMEOUT_MS);
      const want = options.journalMode === "wal" && walSafe(sqliteVersion()) ? "wal" : "delete";
      await switchJournalMode(db, path, want);
      db.exec("PRAGMA synchronous = FULL");
      db.exec("PRAGMA foreign_keys = ON");
      db.transaction(() => {
        using version = db.prepare("PRAGMA user_version");
        if ((version.value<[number]>()?.[0] ?? 0) < 1) db.exec(SCHEMA);
      }).immediate();
      return new AltStore(db);
    } catch (error) {
      db.close();
      throw error;
    }
  }

  // --- conversations and entries --------------------------------------------------

  /** Creates a conversation; an existing one is kept. */
  createSession(id: string): Promise<void> {
    this.#write(() =>
      this.#q(
        "INSERT INTO conversation (conv_key, opened_ms) VALUES (?, ?) ON CONFLICT (conv_key) DO NOTHING",
      ).run(id, Date.now())
    );
    return Promise.resolve();
  }

  /** Reads a conversation. */
  getSession(id: string): Promise<StoredSession | undefined> {
    const row = this.#conversation(id);
    if (!row) return Promise.resolve(undefined);
    return Promise.resolve({ ...toSession(row), handoffState: this.#handoffState(id) });
  }

  /** Lists every conversation. */
  listSessions(): Promise<StoredSession[]> {
    return Promise.resolve(
      this.#q(
        "SELECT conv_key, closed_ms, close_cause, origin_key FROM conversation ORDER BY opened_ms, conv_key",
      ).all<ConversationRow>().map(toSession),
    );
  }

  /** Appends an entry; resolves with its sequence number once committed. */
  appendMessage(sessionId: string, message: CellMessage): Promise<number> {
    const seq = this.#write(() => {
      this.#writable(sessionId, "append to");
      this.#q(
        "INSERT INTO entry (conv_key, speaker, body, written_ms) VALUES (?, ?, ?, ?)",
      ).run(sessionId, message.role, message.content, Date.now());
      return Number(this.#db.lastInsertRowId);
    });
    return Promise.resolve(seq);
  }

  /** The live entries in sequence order; with `includeInactive` the soft-deleted ones too. */
  getMessages(
    sessionId: string,
    options: { includeInactive?: boolean } = {},
  ): Promise<StoredMessage[]> {
    const rows = this.#q(
      `SELECT seq, speaker, body, deleted_at FROM entry
       WHERE conv_key = ?1 AND (?2 OR deleted_at IS NULL) ORDER BY seq`,
    ).all<{ seq: number; speaker: string; body: string | null; deleted_at: number | null }>(
      sessionId,
      options.includeInactive ? 1 : 0,
    );
    return Promise.resolve(
      rows.map((r) => ({
        id: r.seq,
        role: r.speaker,
        content: r.body,
        active: r.deleted_at === null,
      })),
    );
  }

  // --- handoff (events) -----------------------------------------------------------

  /** Parks a conversation (a new `parked` round) unless a round is open. */
  requestHandoff(sessionId: string, platform: string): Promise<boolean> {
    return Promise.resolve(this.#write(() => {
      this.#existing(sessionId);
      const state = this.#handoffState(sessionId);
      if (state === "pending" || state === "running") return false;
      this.#q(
        `INSERT INTO handoff_event (conv_key, round, kind, platform, at_ms)
         SELECT ?1, coalesce(max(round), 0) + 1, 'parked', ?2, ?3 FROM handoff_event WHERE conv_key = ?1`,
      ).run(sessionId, platform, Date.now());
      return true;
    }));
  }

  /** Claims the latest parked round: the primary key lets one `claimed` event in. */
  claimHandoff(sessionId: string): Promise<boolean> {
    const won = this.#write(() =>
      this.#q(
        `INSERT INTO handoff_event (conv_key, round, kind, at_ms)
         SELECT conv_key, round, 'claimed', ?2 FROM handoff_event
         WHERE conv_key = ?1 AND kind = 'parked'
           AND round = (SELECT max(round) FROM handoff_event WHERE conv_key = ?1)
         ON CONFLICT DO NOTHING`,
      ).run(sessionId, Date.now()) === 1
    );
    crashPoint("claimHandoff:afterCommit");
    return Promise.resolve(won);
  }

  /** Completes the latest claimed round. */
  completeHandoff(sessionId: string): Promise<boolean> {
    return Promise.resolve(this.#write(() =>
      this.#q(
        `INSERT INTO handoff_event (conv_key, round, kind, at_ms)
         SELECT conv_key, round, 'completed', ?2 FROM handoff_event
         WHERE conv_key = ?1 AND kind = 'claimed'
           AND round = (SELECT max(round) FROM handoff_event WHERE conv_key = ?1)
         ON CONFLICT DO NOTHING`,
      ).run(sessionId, Date.now()) === 1
    ));
  }

  /** The state of the latest round: `pending`, `running`, `completed`, or `null`. */
  getHandoffState(sessionId: string): Promise<string | null> {
    return Promise.resolve(this.#handoffState(sessionId));
  }

  // --- rotation -------------------------------------------------------------------

  /** Takes the rotation lease; another holder's is taken over when expired or its pid is dead. */
  tryAcquireCompressionLock(sessionId: string, holder: string, ttlMs: number): Promise<boolean> {
    return Promise.resolve(this.#write(() => {
      this.#existing(sessionId);
      const now = Date.now();
      const lease = this.#q("SELECT owner, until_ms FROM rotation_lease WHERE conv_key = ?")
        .get<{ owner: string; until_ms: number }>(sessionId);
      if (lease && lease.owner !== holder && lease.until_ms > now) {
        const pid = pidIn(lease.owner);
        if (pid === undefined || alive(pid)) return false;
      }
      this.#q(
        `INSERT INTO rotation_lease (conv_key, owner, until_ms) VALUES (?, ?, ?)
         ON CONFLICT (conv_key) DO UPDATE SET owner = excluded.owner, until_ms = excluded.until_ms`,
      ).run(sessionId, holder, now + ttlMs);
      return true;
    }));
  }

  /** Releases the lease held by `holder`. */
  releaseCompressionLock(sessionId: string, holder: string): Promise<boolean> {
    return Promise.resolve(
      this.#write(() =>
        this.#q("DELETE FROM rotation_lease WHERE conv_key = ? AND owner = ?").run(
          sessionId,
          holder,
        ) === 1
      ),
    );
  }

  /** Closes the parent, then opens the child with its entries: one transaction. */
  publishCompressionChild(publish: {
    parentId: string;
    childId: string;
    holder: string;
    messages: CellMessage[];
  }): Promise<StoredSession> {
    const { parentId, childId, holder, messages } = publish;
    this.#write(() => {
      const now = Date.now();
      const lease = this.#q("SELECT owner, until_ms FROM rotation_lease WHERE conv_key = ?")
        .get<{ owner: string; until_ms: number }>(parentId);
      if (!lease || lease.owner !== holder || lease.until_ms <= now) {
        throw new AltStoreError(
          `Cannot rotate "${parentId}": "${holder}" does not hold its lease (take it first)`,
        );
      }
      const closed = this.#q(
        `UPDATE conversation SET closed_ms = ?, close_cause = 'compression'
         WHERE conv_key = ? AND closed_ms IS NULL`,
      ).run(now, parentId);
      if (closed !== 1) {
        throw new AltStoreError(`Cannot rotate "${parentId}": it is unknown or already closed`);
      }
      crashPoint("publishCompressionChild:afterParentClosed");
      if (this.#conversation(childId)) {
        throw new AltStoreError(`Cannot rotate "${parentId}" into "${childId}": it exists`);
      }
      this.#q(
        `INSERT INTO conversation (conv_key, opened_ms, origin_key, origin_kind)
         VALUES (?, ?, ?, 'rotation')`,
      ).run(childId, now, parentId);
      crashPoint("publishCompressionChild:afterChildOpened");
      for (const m of messages) {
        this.#q("INSERT INTO entry (conv_key, speaker, body, written_ms) VALUES (?, ?, ?, ?)")
          .run(childId, m.role, m.content, now);
      }
    });
    crashPoint("publishCompressionChild:afterCommit");
    return Promise.resolve(toSession(this.#conversation(childId)!));
  }

  // --- rewind and fork ------------------------------------------------------------

  /** Stamps `deleted_at` on the target and every later live entry, under a compare-and-swap. */
  rewindToMessage(
    sessionId: string,
    targetId: number,
    options: { expectedActiveIds?: readonly number[] } = {},
  ): Promise<number> {
    const n = this.#write(() => {
      this.#writable(sessionId, "rewind");
      const target = this.#q(
        "SELECT speaker FROM entry WHERE seq = ? AND conv_key = ? AND deleted_at IS NULL",
      ).value<[string]>(targetId, sessionId);
      if (target?.[0] !== "user") {
        throw new AltStoreError(
          `Cannot rewind "${sessionId}" to ${targetId}: not a live user entry of it`,
        );
      }
      if (options.expectedActiveIds) {
        const live = this.#q(
          "SELECT seq FROM entry WHERE conv_key = ? AND deleted_at IS NULL ORDER BY seq",
        ).values<[number]>(sessionId).map((r) => r[0]).join(",");
        if (live !== options.expectedActiveIds.join(",")) {
          throw new RewindConflictError(
            `Cannot rewind "${sessionId}": its live entries changed since they were read (read them again)`,
          );
        }
      }
      crashPoint("rewindToMessage:afterCheck");
      const changed = this.#q(
        "UPDATE entry SET deleted_at = ? WHERE conv_key = ? AND seq >= ? AND deleted_at IS NULL",
      ).run(Date.now(), sessionId, targetId);
      crashPoint("rewindToMessage:afterSoftDelete");
      return changed;
    });
    crashPoint("rewindToMessage:afterCommit");
    return Promise.resolve(n);
  }

  /** Opens a branch with copies of the live entries up to `atMessageId`. */
  forkSession(sessionId: string, atMessageId: number, newId: string): Promise<StoredSession> {
    this.#write(() => {
      this.#existing(sessionId);
      const at = this.#q(
        "SELECT 1 FROM entry WHERE seq = ? AND conv_key = ? AND deleted_at IS NULL",
      ).value(atMessageId, sessionId);
      if (!at) {
        throw new AltStoreError(`Cannot fork "${sessionId}" at ${atMessageId}: not a live entry`);
      }
      if (this.#conversation(newId)) {
        throw new AltStoreError(`Cannot fork "${sessionId}" into "${newId}": it exists`);
      }
      this.#q(
        `INSERT INTO conversation (conv_key, opened_ms, origin_key, origin_kind)
         VALUES (?, ?, ?, 'fork')`,
      ).run(newId, Date.now(), sessionId);
      crashPoint("forkSession:afterBranch");
      this.#q(
        `INSERT INTO entry (conv_key, speaker, body, written_ms)
         SELECT ?1, speaker, body, written_ms FROM entry
         WHERE conv_key = ?2 AND deleted_at IS NULL AND seq <= ?3 ORDER BY seq`,
      ).run(newId, sessionId, atMessageId);
      crashPoint("forkSession:afterCopy");
    });
    crashPoint("forkSession:afterCommit");
    return Promise.resolve(toSession(this.#conversation(newId)!));
  }

  // --- outbox ---------------------------------------------------------------------

  /** Queues a delivery owned by this process; the same one twice is a no-op. */
  recordObligation(
    obligation: { sessionId: string; messageRef: string; content: string },
  ): Promise<StoredObligation> {
    const { sessionId, messageRef, content } = obligation;
    this.#write(() => {
      this.#existing(sessionId);
      this.#q(
        `INSERT INTO delivery (key, conv_key, ref, payload, phase, owner_pid)
         VALUES (?, ?, ?, ?, 'queued', ?) ON CONFLICT (conv_key, ref, payload) DO NOTHING`,
      ).run(crypto.randomUUID(), sessionId, messageRef, content, Deno.pid);
    });
    crashPoint("recordObligation:afterCommit");
    const row = this.#q(
      `SELECT key, payload, phase, fence, owner_pid, note FROM delivery
       WHERE conv_key = ? AND ref = ? AND payload = ?`,
    ).get<DeliveryRow>(sessionId, messageRef, content)!;
    return Promise.resolve(toObligation(row));
  }

  /** `queued` → `in_flight` under the fence; the new fence, or `null`. */
  markAttempting(id: string, expectedFence: number): Promise<number | null> {
    const changed = this.#write(() =>
      this.#q(
        `UPDATE delivery SET phase = 'in_flight', fence = fence + 1, owner_pid = ?
         WHERE key = ? AND phase = 'queued' AND fence = ?`,
      ).run(Deno.pid, id, expectedFence)
    );
    crashPoint("markAttempting:afterCommit");
    return Promise.resolve(changed === 1 ? expectedFence + 1 : null);
  }

  /** `in_flight` → `done` under the fence. */
  markDelivered(id: string, fence: number): Promise<boolean> {
    return Promise.resolve(this.#write(() =>
      this.#q(
        "UPDATE delivery SET phase = 'done', note = NULL WHERE key = ? AND phase = 'in_flight' AND fence = ?",
      ).run(id, fence) === 1
    ));
  }

  /** An open delivery → `gave_up`, with the reason. */
  markFailed(id: string, fence: number, reason: string): Promise<boolean> {
    return Promise.resolve(this.#settle("gave_up", id, fence, reason));
  }

  /** An open delivery → `maybe_sent`, with the reason. */
  markUnknown(id: string, fence: number, reason: string): Promise<boolean> {
    return Promise.resolve(this.#settle("maybe_sent", id, fence, reason));
  }

  /** Takes over the open deliveries of dead owners, in one transaction. */
  sweepRecoverable(
    options: { idempotentTransport?: boolean } = {},
  ): Promise<RecoveredObligationView[]> {
    const taken = this.#write(() => {
      const open = this.#q(
        `SELECT key, payload, phase, fence, owner_pid, note FROM delivery
         WHERE phase IN ('queued', 'in_flight') ORDER BY n`,
      ).all<DeliveryRow>();
      const out: { key: string; action: RecoveredObligationView["action"] }[] = [];
      for (const row of open) {
        if (alive(row.owner_pid)) continue;
        if (row.phase === "queued" || options.idempotentTransport) {
          this.#q(
            "UPDATE delivery SET owner_pid = ?, fence = fence + 1 WHERE key = ? AND fence = ?",
          )
            .run(Deno.pid, row.key, row.fence);
          out.push({ key: row.key, action: row.phase === "queued" ? "send" : "resend" });
        } else {
          this.#q(
            "UPDATE delivery SET phase = 'maybe_sent', owner_pid = ?, note = ? WHERE key = ? AND fence = ?",
          ).run(
            Deno.pid,
            `its owner (pid ${row.owner_pid}) died while sending it; without an idempotent transport it is not sent again`,
            row.key,
            row.fence,
          );
          out.push({ key: row.key, action: "unknown" });
        }
      }
      return out;
    });
    return Promise.resolve(taken.map(({ key, action }) => ({
      obligation: this.#delivery(key)!,
      action,
      idempotencyKey: key,
    })));
  }

  /** Every delivery, oldest first. */
  listObligations(): Promise<StoredObligation[]> {
    return Promise.resolve(
      this.#q("SELECT key, payload, phase, fence, owner_pid, note FROM delivery ORDER BY n")
        .all<DeliveryRow>().map(toObligation),
    );
  }

  /** One delivery. */
  getObligation(id: string): Promise<StoredObligation | undefined> {
    return Promise.resolve(this.#delivery(id));
  }

  // --- invariants and lifecycle ---------------------------------------------------

  /** The store's invariants: one line per violation. */
  checkInvariants(): Promise<string[]> {
    const problems: string[] = [];
    const integrity = this.#q("PRAGMA integrity_check").values<[string]>().map((r) => r[0]);
    if (integrity.join() !== "ok") problems.push(`integrity_check: ${integrity.join("; ")}`);
    const fk = this.#q("PRAGMA foreign_key_check").values();
    if (fk.length) problems.push(`foreign_key_check: ${fk.length} violation(s)`);
    const checks: [string, string][] = [
      [
        "closed by a rotation without its continuation",
        `SELECT p.conv_key FROM conversation p WHERE p.close_cause = 'compression' AND NOT EXISTS
         (SELECT 1 FROM conversation c WHERE c.origin_key = p.conv_key AND c.origin_kind = 'rotation')`,
      ],
      [
        "more than one continuation",
        `SELECT origin_key FROM conversation WHERE origin_kind = 'rotation'
         GROUP BY origin_key HAVING count(*) > 1`,
      ],
      [
        "a handoff event without its predecessor",
        `SELECT e.conv_key || '#' || e.round FROM handoff_event e
         WHERE e.kind != 'parked' AND NOT EXISTS (SELECT 1 FROM handoff_event p
           WHERE p.conv_key = e.conv_key AND p.round = e.round
             AND p.kind = CASE e.kind WHEN 'claimed' THEN 'parked' ELSE 'claimed' END)`,
      ],
      [
        "a settled delivery without a reason, or a negative fence",
        `SELECT key FROM delivery
         WHERE (phase IN ('gave_up', 'maybe_sent') AND (note IS NULL OR note = '')) OR fence < 0`,
      ],
    ];
    for (const [what, sql] of checks) {
      const rows = this.#q(sql).values<[string]>().map((r) => r[0]);
      if (rows.length) problems.push(`${what}: ${rows.slice(0, 10).join(", ")}`);
    }
    return Promise.resolve(problems);
  }

  /** Closes the store. */
  close(): Promise<void> {
    this.#statements.clear();
    this.#db.close();
    return Promise.resolve();
  }

  // --- internals ------------------------------------------------------------------

  #q(sql: string): Statement {
    let statement = this.#statements.get(sql);
    if (!statement) {
      statement = this.#db.prepare(sql);
      this.#statements.set(sql, statement);
    }
    return statement;
  }

  /** One BEGIN IMMEDIATE transaction; SQLite's busy handler waits out other writers. */
  #write<T>(fn: () => T): T {
    return this.#db.transaction(fn).immediate();
  }

  #conversation(id: string): ConversationRow | undefined {
    return this.#q(
      "SELECT conv_key, closed_ms, close_cause, origin_key FROM conversation WHERE conv_key = ?",
    ).get<ConversationRow>(id);
  }

  #existing(id: string): ConversationRow {
    const row = this.#conversation(id);
    if (!row) throw new AltStoreError(`Unknown conversation "${id}" (create it first)`);
    return row;
  }

  #writable(id: string, action: string): ConversationRow {
    const row = this.#existing(id);
    if (row.close_cause === "compression") {
      const next = this.#q(
        "SELECT conv_key FROM conversation WHERE origin_key = ? AND origin_kind = 'rotation'",
      ).value<[string]>(id)?.[0];
      throw new CompressionSessionClosedError(
        `Cannot ${action} "${id}": a compression rotation closed it${
          next ? ` (continue in "${next}")` : ""
        }`,
      );
    }
    return row;
  }

  #handoffState(id: string): string | null {
    const kinds = this.#q(
      `SELECT kind FROM handoff_event
       WHERE conv_key = ?1 AND round = (SELECT max(round) FROM handoff_event WHERE conv_key = ?1)`,
    ).values<[string]>(id).map((r) => r[0]);
    if (kinds.includes("completed")) return "completed";
    if (kinds.includes("claimed")) return "running";
    return kinds.includes("parked") ? "pending" : null;
  }

  #delivery(key: string): StoredObligation | undefined {
    const row = this.#q(
      "SELECT key, payload, phase, fence, owner_pid, note FROM delivery WHERE key = ?",
    ).get<DeliveryRow>(key);
    return row ? toObligation(row) : undefined;
  }

  #settle(phase: "gave_up" | "maybe_sent", id: string, fence: number, reason: string): boolean {
    return this.#write(() =>
      this.#q(
        `UPDATE delivery SET phase = ?, note = ?
         WHERE key = ? AND phase IN ('queued', 'in_flight') AND fence = ?`,
      ).run(phase, reason, id, fence) === 1
    );
  }
}
