import { sqliteLibraryPath, sqliteVersion } from "../session_db/sqlite/database.ts";
import { isFolder, readPrefix } from "../internal/fs.ts";
import { hasDatabaseHeader, hasJournalMagic, JOURNAL_MAGIC } from "../internal/sqlite_files.ts";

/**
 * A journal-mode leg: `default` leaves `SESSION_DB_JOURNAL_MODE` unset.
 *
 * @example
 * ```ts
 * import { type LegName, parseLeg } from "./legs.ts";
 * const leg: LegName = parseLeg(Deno.env.get("SESSION_DB_JOURNAL_MODE"));
 * console.log(leg); // "default" when unset
 * ```
 */
export type LegName = "default" | "delete" | "wal";

/**
 * Every leg, in matrix order.
 *
 * @example
 * ```ts
 * import { LEGS } from "./legs.ts";
 * for (const leg of LEGS) {
 *   console.log(leg === "default" ? "(unset)" : `SESSION_DB_JOURNAL_MODE=${leg}`);
 * }
 * ```
 */
export const LEGS: readonly LegName[] = ["default", "delete", "wal"];

/**
 * The leg and library a run uses.
 *
 * @example
 * ```ts
 * import { type Leg, legEnv } from "./legs.ts";
 * const leg: Leg = { name: "wal", library: "/usr/lib/libsqlite3.so.0", sqliteVersion: "3.46.1" };
 * console.log(legEnv(leg)); // { SESSION_DB_JOURNAL_MODE: "wal" }
 * ```
 */
export interface Leg {
  /** The journal-mode leg. */
  name: LegName;
  /** The SQLite library path handed to every child. */
  library: string;
  /** The library's SQLite version. */
  sqliteVersion: string;
}

/**
 * Raised on a leg that does not exist.
 *
 * @example
 * ```ts
 * import { LegError, parseLeg } from "./legs.ts";
 * try {
 *   parseLeg("memory");
 * } catch (error) {
 *   console.log(error instanceof LegError); // true
 * }
 * ```
 */
export class LegError extends Error {
  /** Creates the error. */
  constructor(message: string) {
    super(message);
    this.name = "LegError";
  }
}

/**
 * Parses a leg name.
 *
 * @param value `default`, `delete`, `wal` (any case), or empty/undefined for default.
 * @returns The leg name.
 * @throws {LegError} On anything else, naming the valid legs.
 * @example
 * ```ts
 * import { parseLeg } from "./legs.ts";
 * console.log(parseLeg("WAL")); // "wal"
 * ```
 */
export function parseLeg(value: string | undefined): LegName {
  if (value === undefined || value.trim() === "") return "default";
  const name = value.trim().toLowerCase();
  if ((LEGS as readonly string[]).includes(name)) return name as LegName;
  throw new LegError(
    `Unknown journal-mode leg "${value}": use one of ${
      LEGS.join(", ")
    } (SESSION_DB_JOURNAL_MODE unset means default)`,
  );
}

/**
 * The leg of this test process: `SESSION_DB_JOURNAL_MODE` and the SQLite library this
 * process loaded (`DENO_SQLITE_PATH`, else the system one).
 *
 * @returns The current leg.
 * @example
 * ```ts
 * import { currentLeg } from "./legs.ts";
 * const leg = currentLeg();
 * console.log(`${leg.name} leg on SQLite ${leg.sqliteVersion} (${leg.library})`);
 * ```
 */
export function currentLeg(): Leg {
  return {
    name: parseLeg(Deno.env.get("SESSION_DB_JOURNAL_MODE")),
    library: sqliteLibraryPath(),
    sqliteVersion: sqliteVersion(),
  };
}

/**
 * The environment that steers a child's own resolver to the leg.
 *
 * @param leg The leg.
 * @returns Variables to add to the child's environment.
 * @example
 * ```ts
 * import { currentLeg, legEnv } from "./legs.ts";
 * const env = legEnv(currentLeg()); // {} on the default leg
 * console.log(env.SESSION_DB_JOURNAL_MODE ?? "unset");
 * ```
 */
export function legEnv(leg: Pick<Leg, "name">): Record<string, string> {
  return leg.name === "default" ? {} : { SESSION_DB_JOURNAL_MODE: leg.name };
}

/**
 * A journal mode as observed on disk. `wal` and `delete` are the legs; `truncate` and
 * `persist` are the other rollback modes that leave a trace (an empty journal at rest, a
 * journal whose header was zeroed); `missing` is no file at the path, `not-sqlite` a file
 * that is not an SQLite database (a store of another kind, or one that keeps its data
 * elsewhere). MEMORY and OFF leave no journal at all, so on disk they read as `delete`.
 *
 * @example
 * ```ts
 * import type { ObservedMode } from "./legs.ts";
 * const mode: ObservedMode = "persist";
 * ```
 */
export type ObservedMode = "wal" | "delete" | "truncate" | "persist" | "missing" | "not-sqlite";

/**
 * One observation of the mode a writer actually ran in, taken the instant it was killed,
 * before anything reopened the file.
 *
 * @example
 * ```ts
 * import type { JournalObservation } from "./legs.ts";
 * const seen: JournalObservation = { at: "round 1", mode: "delete", detail: "hot journal" };
 * ```
 */
export interface JournalObservation {
  /** When it was taken, e.g. `round 2` or `publishCompressionChild:afterChildInsert`. */
  at: string;
  /** The mode. */
  mode: ObservedMode;
  /** What on disk said so, when more than the header. */
  detail?: string;
}

/**
 * A rollback journal's header: magic (8), record count (4), checksum seed (4), original
 * size (4), sector size (4), page size (4). PERSIST zeroes all 28 bytes at COMMIT; a new
 * header not yet synced has only its first 12 zeroed and still names the page size.
 */
const JOURNAL_HEADER_BYTES = 28;

/**
 * Observes the journal mode a writer ran in from what SQLite left on disk, without
 * opening the database (no lock taken, no hot journal rolled back): the header's bytes
 * 18 and 19 (2 = WAL, 1 = a rollback journal) and, for a rollback journal, the `-journal`
 * file. A journal with a live header is a transaction in flight; at rest, one whose
 * header was zeroed is PERSIST's and an empty one TRUNCATE's. Mid-operation both can be any
 * rollback mode's new journal (created, or not yet synced: SQLite writes its magic only
 * after the sync), so `quiescent` says the writer was killed between operations (e.g. the
 * instant an append was acknowledged, or while it waited).
 *
 * @param path The database file.
 * @param at When the observation is taken (kept in it).
 * @param quiescent Whether the writer was between operations when it died.
 * @returns The observation.
 * @example
 * ```ts
 * import { observeJournalMode } from "./legs.ts";
 * console.log(observeJournalMode("/tmp/does-not-exist.db", "after the run").mode); // "missing"
 * ```
 */
export function observeJournalMode(
  path: string,
  at: string,
  quiescent = false,
): JournalObservation {
  // A store may make its path a folder of its own files (a LevelDB-like layout).
  if (isFolder(path)) return { at, mode: "not-sqlite", detail: "a folder, not a file" };
  const header = readPrefix(path, 100);
  const journal = header?.length ? readPrefix(`${path}-journal`, JOURNAL_HEADER_BYTES) : undefined;
  return modeOnDisk({ header, journal }, at, quiescent);
}

/**
 * {@linkcode observeJournalMode} on bytes already read: a crash image held in memory (the
 * file-system call tier's states) is observed exactly as a file on disk, its writer taken
 * to be mid-operation (killed before a call, not between operations).
 *
 * @param header The database file's first 100 bytes (or all of it), `undefined` when absent.
 * @param journal The `-journal` file's first 28 bytes (or all of it), `undefined` when absent.
 * @param at When the observation is taken.
 * @returns The observation.
 * @example
 * ```ts
 * import { journalModeOf } from "./legs.ts";
 * console.log(journalModeOf(undefined, undefined, "state 3").mode); // "missing"
 * ```
 */
export function journalModeOf(
  header: Uint8Array | undefined,
  journal: Uint8Array | undefined,
  at: string,
): JournalObservation {
  return modeOnDisk({ header, journal }, at, false);
}

/** The journal mode the bytes show; `quiescent`: the writer died between operations. */
function modeOnDisk(
  bytes: { header: Uint8Array | undefined; journal: Uint8Array | undefined },
  at: string,
  quiescent: boolean,
): JournalObservation {
  const { header, journal } = bytes;
  if (header === undefined) return { at, mode: "missing" };
  if (header.length === 0) return { at, mode: "delete", detail: "empty database file" };
  if (!hasDatabaseHeader(header)) {
    return { at, mode: "not-sqlite", detail: "the file has no SQLite header" };
  }
  if (header[18] === 2 && header[19] === 2) return { at, mode: "wal" };
  if (journal === undefined) return { at, mode: "delete" };
  const head = journal.subarray(0, JOURNAL_MAGIC.length);
  if (head.length === 0) {
    return quiescent
      ? { at, mode: "truncate", detail: "an empty journal at rest" }
      : { at, mode: "delete", detail: "an empty journal mid-operation (created or truncated)" };
  }
  if (hasJournalMagic(head)) {
    return { at, mode: "delete", detail: "hot journal (a transaction in flight)" };
  }
  // With full syncs SQLite writes a new journal's magic as zeros until the journal is
  // synced, so mid-operation a zeroed magic is any rollback mode's new journal. PERSIST's
  // COMMIT zeroes the whole header; a new one still names its page size. A new header at a
  // quiescent instant is a transaction left open across an acknowledgement: in flight, not
  // PERSIST at rest.
  if (head.every((byte) => byte === 0)) {
    const rest = journal.subarray(JOURNAL_MAGIC.length, JOURNAL_HEADER_BYTES);
    const fresh = rest.length === JOURNAL_HEADER_BYTES - JOURNAL_MAGIC.length &&
      rest.subarray(16).some((byte) => byte !== 0);
    if (quiescent && !fresh) {
      return { at, mode: "persist", detail: "a journal whose header was zeroed, at rest" };
    }
    return {
      at,
      mode: "delete",
      detail: quiescent
        ? "a journal header not yet synced between operations (a transaction left open)"
        : "a journal not yet synced (magic still zero)",
    };
  }
  return { at, mode: "delete", detail: "a journal with a torn header" };
}

/**
 * The verdict on a leg from every observation of a run.
 *
 * @example
 * ```ts
 * import { currentLeg, effectiveModeOrSkip, type LegAudit } from "./legs.ts";
 * import { SessionDB } from "../session_db/session_db.ts";
 * const path = `${Deno.makeTempDirSync()}/s.db`;
 * SessionDB.open(path).close();
 * const audit: LegAudit = effectiveModeOrSkip(path, currentLeg());
 * console.log(audit.honoured ? `on disk: ${audit.onDisk}` : `SKIP: ${audit.reason}`);
 * ```
 */
export interface LegAudit {
  /** Whether every observation is in the mode the leg advertises. */
  honoured: boolean;
  /** The modes observed, in order of first appearance, joined by `, `. */
  onDisk: string;
  /** Why not, when not honoured: the leg and every observation that disagreed. */
  reason?: string;
  /** Whether journal-mode legs do not apply to this store at all (it is not SQLite). */
  notApplicable?: boolean;
}

/**
 * Judges a leg by every observation of a run: honoured only when each one is in the
 * leg's mode (the default leg takes whatever SQLite mode the store chose). A store whose
 * file is not SQLite is judged on the default leg only: the other legs do not apply.
 *
 * @param leg The leg.
 * @param observations Every observation of the run (at least one).
 * @returns The verdict.
 * @example
 * ```ts
 * import { currentLeg, legVerdict } from "./legs.ts";
 * const leg = { ...currentLeg(), name: "wal" as const };
 * const audit = legVerdict(leg, [{ at: "round 1", mode: "wal" }, { at: "round 2", mode: "delete" }]);
 * console.log(audit.honoured, audit.reason); // false, leg wal not honoured: ... round 2: delete
 * ```
 */
export function legVerdict(leg: Leg, observations: readonly JournalObservation[]): LegAudit {
  const onDisk = [...new Set(observations.map((o) => o.mode))].join(", ") || "not observed";
  const foreign = observations.filter((o) => o.mode === "not-sqlite" || o.mode === "missing");
  if (foreign.length) {
    if (leg.name === "default") return { honoured: true, onDisk, notApplicable: true };
    return {
      honoured: false,
      onDisk,
      notApplicable: true,
      reason:
        `leg ${leg.name} not applicable: journal-mode legs are an SQLite notion, and the store's file is ${
          foreign[0]!.mode === "missing" ? "not at the path it was given" : "not an SQLite database"
        } (${describe(foreign[0]!)}); the store is judged on the default leg`,
    };
  }
  if (observations.length === 0) {
    return { honoured: false, onDisk, reason: `leg ${leg.name} not observed: no kill was audited` };
  }
  if (leg.name === "default") return { honoured: true, onDisk };
  const wrong = observations.filter((o) => o.mode !== leg.name);
  if (!wrong.length) return { honoured: true, onDisk };
  return {
    honoured: false,
    onDisk,
    reason:
      `leg ${leg.name} not honoured: the writer ran in another mode at ${wrong.length} of ${observations.length} kill(s) on SQLite ${leg.sqliteVersion}: ${
        wrong.slice(0, 5).map(describe).join("; ")
      }${wrong.length > 5 ? `; … ${wrong.length - 5} more` : ""}`,
  };
}

function describe(o: JournalObservation): string {
  return `${o.at}: ${o.mode}${o.detail ? ` (${o.detail})` : ""}`;
}

/**
 * Audits the on-disk journal mode of a database at rest (its writer stopped) against its
 * leg. Cells observe every kill instead ({@linkcode observeJournalMode}): an audit after a
 * clean close can be fooled by a store that switches mode in `close()`.
 *
 * @param path The database file.
 * @param leg The leg.
 * @returns Whether the leg was honoured and what is on disk.
 * @example
 * ```ts
 * import { currentLeg, effectiveModeOrSkip } from "./legs.ts";
 * import { SessionDB } from "../session_db/session_db.ts";
 * const path = `${Deno.makeTempDirSync()}/s.db`;
 * SessionDB.open(path, { journalMode: "delete" }).close();
 * const audit = effectiveModeOrSkip(path, { ...currentLeg(), name: "delete" });
 * console.log(audit); // { honoured: true, onDisk: "delete" }
 * ```
 */
export function effectiveModeOrSkip(path: string, leg: Leg): LegAudit {
  return legVerdict(leg, [observeJournalMode(path, "at rest", true)]);
}
