import { onDiskJournalMode } from "../session_db/journal_mode.ts";
import { sqliteLibraryPath, sqliteVersion } from "../session_db/sqlite/database.ts";

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
export function legEnv(leg: Leg): Record<string, string> {
  return leg.name === "default" ? {} : { SESSION_DB_JOURNAL_MODE: leg.name };
}

/**
 * The result of the on-disk audit.
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
  const onDisk = onDiskJournalMode(path);
  if (leg.name === "default" || onDisk === leg.name) return { honoured: true, onDisk };
  return {
    honoured: false,
    onDisk,
    reason:
      `leg ${leg.name} not honoured: the store left the file in ${onDisk} mode on SQLite ${leg.sqliteVersion}`,
  };
}
