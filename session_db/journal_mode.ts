import { hasDatabaseHeader } from "../internal/sqlite_files.ts";

/**
 * A journal mode the store supports.
 *
 * @example
 * ```ts
 * import type { JournalMode } from "./journal_mode.ts";
 * import { SessionDB } from "./session_db.ts";
 * const journalMode: JournalMode = "delete";
 * const db = SessionDB.open(`${Deno.makeTempDirSync()}/s.db`, { journalMode });
 * console.log(db.journalMode); // "delete"
 * db.close();
 * ```
 */
export type JournalMode = "wal" | "delete";

/**
 * The journal modes accepted by the option and `SESSION_DB_JOURNAL_MODE`.
 *
 * @example
 * ```ts
 * import { JOURNAL_MODES, type JournalMode } from "./journal_mode.ts";
 * function isJournalMode(value: string): value is JournalMode {
 *   return (JOURNAL_MODES as readonly string[]).includes(value);
 * }
 * console.log(isJournalMode("wal"), isJournalMode("off")); // true false
 * ```
 */
export const JOURNAL_MODES: readonly JournalMode[] = ["wal", "delete"];

/**
 * The journal mode used when neither the option nor the environment names one.
 *
 * @example
 * ```ts
 * import { decideJournalMode, DEFAULT_JOURNAL_MODE } from "./journal_mode.ts";
 * console.log(DEFAULT_JOURNAL_MODE); // "wal"
 * console.log(decideJournalMode(DEFAULT_JOURNAL_MODE, "3.53.2", "delete").mode); // "wal"
 * ```
 */
export const DEFAULT_JOURNAL_MODE: JournalMode = "wal";

function parseVersion(version: string): [number, number, number] {
  const [major = 0, minor = 0, patch = 0] = version.split(".").map((part) => Number(part) || 0);
  return [major, minor, patch];
}

function versionNumber(version: string): number {
  const [major, minor, patch] = parseVersion(version);
  return major * 1_000_000 + minor * 1_000 + patch;
}

/**
 * Whether a SQLite version has the WAL-reset bug: 3.7.0 to 3.51.2, except the
 * backports 3.44.6 (to 3.45.0) and 3.50.7 (to 3.51.0).
 *
 * @param version A version string, e.g. `"3.40.1"`.
 * @returns `true` when WAL is unsafe with concurrent checkpointing writers.
 * @example
 * ```ts
 * import { isWalResetVulnerable } from "./journal_mode.ts";
 * console.log(isWalResetVulnerable("3.40.1"), isWalResetVulnerable("3.53.2")); // true false
 * ```
 */
export function isWalResetVulnerable(version: string): boolean {
  const v = versionNumber(version);
  if (v < 3_007_000 || v >= 3_051_003) return false;
  if (v >= 3_050_007 && v < 3_051_000) return false;
  if (v >= 3_044_006 && v < 3_045_000) return false;
  return true;
}

/**
 * Why a journal mode was chosen.
 *
 * @example
 * ```ts
 * import { decideJournalMode, type JournalModeDecision } from "./journal_mode.ts";
 * const decision: JournalModeDecision = decideJournalMode("wal", "3.40.1", "delete");
 * if (decision.mode !== decision.requested) console.warn(decision.reason); // the WAL-reset gate
 * ```
 */
export interface JournalModeDecision {
  /** The mode to put the file in. */
  mode: JournalMode;
  /** The mode asked for (option, environment or default). */
  requested: JournalMode;
  /** One sentence on why `mode` differs from `requested`, or `"as requested"`. */
  reason: string;
}

/**
 * Decides the journal mode of a file (DESIGN §2): the request is honoured, except
 * that on a WAL-reset-vulnerable SQLite a new or rollback-journal file stays in
 * DELETE, while a file already in WAL stays in WAL (never live-downgraded).
 *
 * @param requested The requested mode.
 * @param sqlite The SQLite version in use.
 * @param onDisk The file's current mode (`"wal"`, or a rollback mode such as `"delete"`).
 * @returns The decision with its reason.
 * @example
 * ```ts
 * import { decideJournalMode } from "./journal_mode.ts";
 * console.log(decideJournalMode("wal", "3.40.1", "delete").mode); // "delete"
 * ```
 */
export function decideJournalMode(
  requested: JournalMode,
  sqlite: string,
  onDisk: string,
): JournalModeDecision {
  if (requested === "delete") return { mode: "delete", requested, reason: "as requested" };
  if (onDisk === "wal") return { mode: "wal", requested, reason: "as requested" };
  if (isWalResetVulnerable(sqlite)) {
    return {
      mode: "delete",
      requested,
      reason:
        `WAL-reset gate: SQLite ${sqlite} is vulnerable (fixed in 3.51.3), so a new or DELETE file stays in DELETE`,
    };
  }
  return { mode: "wal", requested, reason: "as requested" };
}

let warnedEnv = false;

/**
 * The journal mode requested by `SESSION_DB_JOURNAL_MODE`, or `undefined` when unset.
 * An unknown value warns once on stderr and counts as unset.
 *
 * @returns The parsed mode.
 * @example
 * ```ts
 * import { journalModeFromEnv } from "./journal_mode.ts";
 * console.log(journalModeFromEnv() ?? "unset");
 * ```
 */
export function journalModeFromEnv(): JournalMode | undefined {
  let raw: string | undefined;
  try {
    raw = Deno.env.get("SESSION_DB_JOURNAL_MODE");
  } catch {
    return undefined; // no env permission: unset
  }
  if (raw === undefined || raw === "") return undefined;
  const mode = raw.trim().toLowerCase();
  if ((JOURNAL_MODES as readonly string[]).includes(mode)) return mode as JournalMode;
  if (!warnedEnv) {
    warnedEnv = true;
    console.warn(
      `Ignoring SESSION_DB_JOURNAL_MODE "${raw}": use one of ${
        JOURNAL_MODES.join(", ")
      }; using the default ${DEFAULT_JOURNAL_MODE}`,
    );
  }
  return undefined;
}

/**
 * Reads a database file's effective journal mode from its header (bytes 18 and 19: 2
 * means WAL, 1 a rollback journal), independently of any connection. Reading the
 * header takes no lock and never rolls back a hot journal, so it works on a file
 * left behind by a killed writer. `"wal"` or `"delete"`; `"missing"` when there is
 * no file; a new, empty file is `"delete"`.
 *
 * @param path The database file.
 * @returns The on-disk journal mode.
 * @throws {Error} When the file exists but is not a SQLite database.
 * @example
 * ```ts
 * import { onDiskJournalMode } from "./journal_mode.ts";
 * console.log(onDiskJournalMode("/tmp/does-not-exist.db")); // "missing"
 * ```
 */
export function onDiskJournalMode(path: string): string {
  let header: Uint8Array;
  try {
    const file = Deno.openSync(path, { read: true });
    try {
      header = new Uint8Array(100);
      const n = file.readSync(header) ?? 0;
      if (n === 0) return "delete";
      if (n < 100) header = header.subarray(0, n);
    } finally {
      file.close();
    }
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return "missing";
    throw error;
  }
  if (!hasDatabaseHeader(header)) {
    throw new Error(
      `Cannot read the journal mode of "${path}": file is not a database (check the path)`,
    );
  }
  return header[18] === 2 && header[19] === 2 ? "wal" : "delete";
}
