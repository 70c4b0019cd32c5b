/**
 * How the runner starts a leg's child (a `deno test` of the cells, a tier's tool): with
 * the tasks' permissions and a cleared environment holding its library, its leg and the
 * cells' settings from ours.
 *
 * @example
 * ```ts
 * import { legChildEnv } from "./leg_child.ts";
 * const env = legChildEnv("/usr/lib/x86_64-linux-gnu/libsqlite3.so.0", "wal");
 * console.log(env.SESSION_DB_JOURNAL_MODE); // "wal"
 * ```
 *
 * @module
 */
import type { LegName } from "../harness/legs.ts";
import { TASK_PERMISSIONS } from "../harness/permissions.ts";

/** What a leg's child takes from our environment: Deno's own, and the cells' settings. */
const CELLS_PASSED_ON = [
  "PATH",
  "HOME",
  "DENO_DIR",
  "TMPDIR",
  "CELLS_EVIDENCE_DIR",
  "CELLS_SEED",
  "CELLS_SPAN",
  "CELLS_KILL_SERIES",
  "CELLS_RACE_SERIES",
  "CELLS_CRASH_POINTS",
  "CELLS_OPEN_DEADLINE_MS",
  "CELLS_CELL_DEADLINE_MS",
  "CELLS_PROCESS_TREE",
];

/** The permissions of a leg's `deno test`/`deno run` child: everything but the network. */
export const LEG_PERMISSIONS: readonly string[] = ["--no-lock", ...TASK_PERMISSIONS];

/**
 * The cleared environment of a leg's child: its library, its journal-mode leg, and
 * what the cells and Deno need from ours (PATH, HOME, DENO_DIR, evidence, seed, TMPDIR).
 *
 * @param library The SQLite library's path (`DENO_SQLITE_PATH`).
 * @param leg The journal-mode leg.
 * @param extra More variables (they win over ours).
 * @returns The environment.
 */
export function legChildEnv(
  library: string,
  leg: LegName,
  extra: Record<string, string> = {},
): Record<string, string> {
  const env: Record<string, string> = { NO_COLOR: "1" };
  if (library) env.DENO_SQLITE_PATH = library;
  if (leg !== "default") env.SESSION_DB_JOURNAL_MODE = leg;
  for (const name of CELLS_PASSED_ON) {
    const value = Deno.env.get(name);
    if (value !== undefined) env[name] = value;
  }
  return { ...env, ...extra };
}
