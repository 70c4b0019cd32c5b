import { onDiskJournalMode } from "../session_db/journal_mode.ts";
import { sqliteLibraryPath, sqliteVersion } from "../session_db/sqlite/database.ts";

/** A journal-mode leg: `default` leaves `SESSION_DB_JOURNAL_MODE` unset. */
export type LegName = "default" | "delete" | "wal";

/** Every leg, in matrix order. */
export const LEGS: readonly LegName[] = ["default", "delete", "wal"];

/** The leg and library a run uses. */
export interface Leg {
  /** The journal-mode leg. */
  name: LegName;
  /** The SQLite library path handed to every child. */
  library: string;
  /** The library's SQLite version. */
  sqliteVersion: string;
}

/** Raised on a leg that does not exist. */
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
 */
export function legEnv(leg: Leg): Record<string, string> {
  return leg.name === "default" ? {} : { SESSION_DB_JOURNAL_MODE: leg.name };
}

/** The result of the on-disk audit. */
export interface LegAudit {
  /** Whether the file's mode is the one the leg advertises. */
  honoured: boolean;
  /** The mode read from disk. */
  onDisk: string;
  /** Why not, when not honoured. */
  reason?: string;
}

/**
 * Audits the on-disk journal mode of a run's database against its leg, through a
 * separate read-only connection. The default leg accepts whatever the store chose.
 *
 * @param path The database file.
 * @param leg The leg.
 * @returns Whether the leg was honoured and what is on disk.
 */
export function effectiveModeOrSkip(path: string, leg: Leg): LegAudit {
  const onDisk = onDiskJournalMode(path);
  if (leg.name === "default" || onDisk === leg.name) return { honoured: true, onDisk };
  return {
    honoured: false,
    onDisk,
    reason:
      `leg ${leg.name} not honoured: the store left the file in ${onDisk} mode on SQLite ${leg.sqliteVersion}`,
  };
}
