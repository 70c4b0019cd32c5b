/**
 * The one SQLite-library resolver of every task: `system` (the system's libsqlite3),
 * `fixed` (the WAL-reset-fixed build, built here when missing and allowed) or a path; and
 * for a store that does not reach SQLite through this project's binding no library axis
 * at all: one run labelled `own` (its own SQLite) or `none` (no SQLite).
 *
 * @example
 * ```ts ignore
 * import { resolveLibraries } from "./libraries.ts";
 * const { libraries, unavailable } = await resolveLibraries(["system", "fixed"], { build: false });
 * console.log(libraries.map((l) => l.label), unavailable);
 * ```
 *
 * @module
 */
import type { StoreEngine } from "../cells/engine/report.ts";
import { exists } from "../internal/fs.ts";
import {
  explicitLibraryPath,
  sqliteLibraryProblem,
  systemLibraryPath,
} from "../session_db/sqlite/library.ts";
import { buildFixedSqlite, fixedSqlitePath } from "./sqlite_build.ts";

export { buildFixedSqlite, fixedSqlitePath } from "./sqlite_build.ts";

/**
 * A SQLite library a run loads, or the label of a store's own engine.
 *
 * @example
 * ```ts
 * import type { Library } from "./libraries.ts";
 * const own: Library = { label: "own", path: "" };
 * ```
 */
export interface Library {
  /**
   * `system`, `fixed`, a path the user named, or `own` / `none` for a store that brings
   * its own SQLite / uses none (no library axis: one run, whatever `--libraries` says).
   */
  label: string;
  /**
   * The shared library the run's processes load (`DENO_SQLITE_PATH`); for `own` and
   * `none` only the suite's own checks load it, never the store.
   */
  path: string;
}

/**
 * The libraries found, and those asked for that are not available, with why.
 *
 * @example
 * ```ts
 * import type { LibraryChoice } from "./libraries.ts";
 * const choice: LibraryChoice = {
 *   libraries: [],
 *   unavailable: [{ label: "fixed", why: "not built (deno task sqlite)" }],
 * };
 * ```
 */
export interface LibraryChoice {
  /** The available ones, in the order asked. */
  libraries: Library[];
  /** Those asked for that cannot run here. */
  unavailable: { label: string; why: string }[];
}

/**
 * Options of {@linkcode resolveLibraries}.
 *
 * @example
 * ```ts
 * import type { ResolveOptions } from "./libraries.ts";
 * const options: ResolveOptions = { build: true, log: console.error };
 * ```
 */
export interface ResolveOptions {
  /** Build the fixed SQLite when it is missing (about 30 s; default false). */
  build?: boolean;
  /** Where the build's progress lines go. */
  log?: (line: string) => void;
}

/**
 * Resolves `system`, `fixed` and paths to libraries.
 *
 * @param wanted The labels asked for.
 * @param options Whether to build the fixed SQLite.
 * @returns The available libraries and why the others are not.
 * @example
 * ```ts ignore
 * import { resolveLibraries } from "./libraries.ts";
 * const { libraries } = await resolveLibraries(["system", "fixed"], { build: false });
 * ```
 */
export async function resolveLibraries(
  wanted: readonly string[],
  options: ResolveOptions = {},
): Promise<LibraryChoice> {
  const choice: LibraryChoice = { libraries: [], unavailable: [] };
  for (const label of wanted) {
    if (label === "system") {
      const path = systemLibraryPath();
      if (path) choice.libraries.push({ label, path });
      else choice.unavailable.push({ label, why: "no system libsqlite3 found" });
    } else if (label === "fixed") {
      const path = fixedSqlitePath();
      if (exists(path)) choice.libraries.push({ label, path });
      else if (!options.build) {
        choice.unavailable.push({ label, why: `${path} is not built (deno task sqlite)` });
      } else {
        try {
          choice.libraries.push({ label, path: await buildFixedSqlite(options) });
        } catch (error) {
          choice.unavailable.push({ label, why: (error as Error).message });
        }
      }
    } else if (!exists(label)) choice.unavailable.push({ label, why: `${label} does not exist` });
    else {
      // A file that is no SQLite library would fail every cell of a correct store.
      const problem = sqliteLibraryProblem(label);
      if (problem) choice.unavailable.push({ label, why: problem });
      else choice.libraries.push({ label, path: label });
    }
  }
  return choice;
}

/**
 * The library a process loads when the choice is not the point (the capability probe, a
 * store on its own SQLite): `DENO_SQLITE_PATH`, else the system one, else the fixed build
 * when it exists. Never builds.
 *
 * @returns Its path, or `undefined` when there is none.
 */
export function hostLibrary(): string | undefined {
  const fixed = fixedSqlitePath();
  return explicitLibraryPath() ?? systemLibraryPath() ?? (exists(fixed) ? fixed : undefined);
}

/**
 * The library axis for a store: the libraries asked for when it runs on this project's
 * binding; one run labelled `own` or `none` on the host library when it brings its own
 * SQLite or none; the first library asked for that exists when it could not be observed
 * (it did not open: nothing is built for it).
 *
 * @param engine What the store runs on.
 * @param wanted The labels asked for.
 * @param options Whether to build the fixed SQLite.
 * @returns The libraries to run on.
 * @example
 * ```ts ignore
 * import { libraryAxis } from "./libraries.ts";
 * const { libraries } = await libraryAxis({ kind: "own-sqlite" }, ["system", "fixed"]);
 * console.log(libraries.map((l) => l.label)); // ["own"]
 * ```
 */
export async function libraryAxis(
  engine: StoreEngine,
  wanted: readonly string[],
  options: ResolveOptions = {},
): Promise<LibraryChoice> {
  if (engine.kind === "binding") return await resolveLibraries(wanted, options);
  if (engine.kind === "unknown") {
    const found = await resolveLibraries(wanted, { build: false });
    return { ...found, libraries: found.libraries.slice(0, 1) };
  }
  const label = engine.kind === "not-sqlite" ? "none" : "own";
  return { libraries: [{ label, path: hostLibrary() ?? "" }], unavailable: [] };
}
