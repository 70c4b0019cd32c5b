// Builds a mutant store: the reference SessionDB with some methods replaced, plus a
// raw connection to the same file for the broken versions to write through.
import {
  CompressionSessionClosedError,
  crashPoints,
  Database,
  SessionDB,
  SessionEndedError,
  SessionNotFoundError,
} from "../../../session_db/mod.ts";
import { SqliteError } from "../../../session_db/sqlite/mod.ts";
import { untilNotBusy } from "../../../session_db/_connection.ts";
import type { StoreOptions } from "../../contract/target.ts";

/** The pieces a mutant's replacement methods use. */
export interface MutantParts {
  /** The reference store (for everything the mutant keeps). */
  store: SessionDB;
  /** A second connection to the same file, for the mutant's own SQL. */
  raw: Database;
}

/**
 * Opens the reference store and overrides some of its methods.
 *
 * @param path The database file.
 * @param options The leg's journal mode.
 * @param overrides The replaced methods.
 * @returns A store that behaves like SessionDB except for `overrides`.
 */
export function openMutant(
  path: string,
  options: StoreOptions,
  overrides: (parts: MutantParts) => Record<string, (...args: never[]) => unknown>,
): SessionDB {
  const store = SessionDB.open(
    path,
    options.journalMode ? { journalMode: options.journalMode } : {},
  );
  const raw = new Database(path);
  // As long as the reference's appends wait out a busy lock: a mutant differs only in its
  // planted defect, never by giving up on a lock a loaded machine holds longer.
  raw.setBusyTimeout(60_000);
  raw.exec("PRAGMA foreign_keys = ON");
  // The store's own synchronous policy, so that a mutant breaks only its one clause and
  // never also loses a commit to power loss (SQLite's default FULL does in DELETE mode).
  raw.exec("PRAGMA synchronous = EXTRA");
  const replaced = overrides({ store, raw });
  return new Proxy(store, {
    get(target, key) {
      if (key === "close") {
        return () => {
          if (raw.inTransaction) raw.exec("COMMIT");
          raw.close();
          target.close();
        };
      }
      if (typeof key === "string" && key in replaced) return replaced[key];
      const value = Reflect.get(target, key, target);
      if (typeof value !== "function") return value;
      // One store, one connection in spirit: a mutant that left its own transaction
      // open (acknowledging before COMMIT) commits it before the reference store
      // writes, as a single connection would, instead of deadlocking against itself.
      return (...args: unknown[]) => {
        if (raw.inTransaction) raw.exec("COMMIT");
        return value.apply(target, args);
      };
    },
  });
}

/**
 * {@linkcode openMutant} whose own connection does not sync (`PRAGMA synchronous = OFF`):
 * the replaced methods' commits may be lost to a power loss, the reference's are not.
 *
 * @param path The database file.
 * @param options The leg's journal mode.
 * @param overrides The replaced methods.
 * @returns A store that behaves like SessionDB except for `overrides`.
 */
export function openUnsyncedMutant(
  path: string,
  options: StoreOptions,
  overrides: (parts: MutantParts) => Record<string, (...args: never[]) => unknown>,
): SessionDB {
  return openMutant(path, options, (parts) => {
    parts.raw.exec("PRAGMA synchronous = OFF");
    return overrides(parts);
  });
}

/**
 * Puts the file at `path` in `mode` from a connection of its own, closed after.
 *
 * @param path The database file.
 * @param mode The journal mode, e.g. `WAL`.
 */
export function setJournalMode(path: string, mode: "WAL" | "DELETE"): void {
  const raw = new Database(path);
  try {
    raw.setBusyTimeout(5000);
    // SQLite answers a mode switch's busy at once (it upgrades a read transaction, where
    // waiting could deadlock), never through the busy timeout: the reference's own busy
    // wait retries it, so that another process's write never makes the mutant fail for a
    // reason that is not its own.
    untilNotBusy(
      () => raw.exec(`PRAGMA journal_mode = ${mode}`),
      5000,
      (_waited, _attempts, cause) => cause instanceof Error ? cause : new Error(String(cause)),
    );
  } finally {
    raw.close();
  }
}

/**
 * The reference store's crash points, minus those of the methods a mutant replaced,
 * plus the mutant's own.
 *
 * @param replaced Names of the replaced methods.
 * @param own The mutant's own points.
 * @returns The points the mutant honours.
 */
export function mutantCrashPoints(replaced: string[], own: string[] = []): string[] {
  return [
    ...crashPoints().filter((p) => !replaced.some((m) => p.startsWith(`${m}:`))),
    ...own,
  ];
}

/**
 * The reference store's guard on appends, for a mutant's own `appendMessage`: an
 * unknown session, or an ended one (by a compression rotation or `endSession`), is refused
 * with the typed error (so the mutant breaks its one clause, not cell 3's typed-error check too).
 *
 * @param raw The mutant's connection.
 * @param sessionId The session appended to.
 */
export function refuseUnwritable(raw: Database, sessionId: string): void {
  const row = raw.prepare("SELECT end_reason FROM sessions WHERE id = ?").value<[string | null]>(
    sessionId,
  );
  if (!row) throw new SessionNotFoundError(`Unknown session "${sessionId}"`);
  if (row[0] === "compression") {
    throw new CompressionSessionClosedError(
      `Cannot append to session "${sessionId}": it was rotated by compression`,
    );
  }
  if (row[0] !== null) {
    throw new SessionEndedError(`Cannot append to session "${sessionId}": it ended (${row[0]})`);
  }
}

/**
 * The rows of an append, as the reference store writes them (the message, then the
 * session's counter), for a mutant's own `appendMessage` inside its own transaction.
 *
 * @param raw The mutant's connection.
 * @param sessionId The session.
 * @param message The message.
 * @returns The new message's id.
 */
export function insertAppend(
  raw: Database,
  sessionId: string,
  message: { role: string; content: string },
): number {
  raw.prepare(
    "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, ?, ?, ?)",
  ).run(sessionId, message.role, message.content, Date.now() / 1000);
  const id = Number(raw.lastInsertRowId);
  raw.prepare("UPDATE sessions SET message_count = message_count + 1 WHERE id = ?").run(sessionId);
  return id;
}

/**
 * `reopenOrphanedCompressionSession` in one IMMEDIATE transaction with only the guard a
 * mutant keeps: refused (`false`) when `refuse` says so (read inside the transaction),
 * else a session ended by compression is reopened.
 *
 * @param raw The mutant's connection.
 * @param sessionId The session to reopen.
 * @param refuse The guard kept.
 * @returns Whether the session was reopened.
 */
export function reopenCompressed(
  raw: Database,
  sessionId: string,
  refuse: () => boolean,
): boolean {
  return raw.transaction(() => {
    if (refuse()) return false;
    return raw.prepare(
      `UPDATE sessions SET ended_at = NULL, end_reason = NULL
       WHERE id = ? AND end_reason = 'compression'`,
    ).run(sessionId) === 1;
  }).immediate();
}

/**
 * An append in one IMMEDIATE transaction, as the reference store makes it but with no
 * retry of its own: a busy lock surfaces as the raw error (see {@linkcode isBusy}).
 *
 * @param raw The mutant's connection.
 * @param sessionId The session.
 * @param message The message.
 * @returns The new message's id.
 */
export function immediateAppend(
  raw: Database,
  sessionId: string,
  message: { role: string; content: string },
): number {
  return raw.transaction(() => {
    refuseUnwritable(raw, sessionId);
    return insertAppend(raw, sessionId, message);
  }).immediate();
}

/**
 * Whether `error` is SQLite's SQLITE_BUSY (any extended code).
 *
 * @param error What was thrown.
 * @returns `true` for a busy lock.
 */
export function isBusy(error: unknown): boolean {
  return error instanceof SqliteError && (error.code & 0xff) === 5;
}

/** Blocks the thread, like a check-then-act that awaits something in between. */
export function pause(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * A mutant whose `appendMessage` does not wait for the write lock (busy timeout 0) and
 * does `onBusy` when it finds the lock taken; cell 6's busy mutants differ only there.
 *
 * @param path The database file.
 * @param options The leg's journal mode.
 * @param onBusy What the broken append does on SQLITE_BUSY (its result is returned).
 * @returns The mutant store.
 */
export function openBusyMutant(
  path: string,
  options: StoreOptions,
  onBusy: (raw: Database) => number,
): SessionDB {
  return openMutant(path, options, ({ raw }) => {
    raw.setBusyTimeout(0);
    return {
      appendMessage(sessionId: string, message: { role: string; content: string }) {
        try {
          return immediateAppend(raw, sessionId, message);
        } catch (error) {
          if (!isBusy(error)) throw error;
          return onBusy(raw);
        }
      },
    };
  });
}
