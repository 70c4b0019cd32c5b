/**
 * The reference target: the project's own {@linkcode SessionDB}.
 *
 * @example
 * ```ts
 * import { openStore } from "./reference_target.ts";
 * const store = openStore(`${Deno.makeTempDirSync()}/s.db`, {});
 * store.close();
 * ```
 *
 * @module
 */
import { crashPoints as storeCrashPoints, SessionDB } from "../session_db/mod.ts";
import type { StoreOptions } from "./contract/target.ts";

/**
 * Opens the reference store.
 *
 * @param path The database file.
 * @param options The leg's journal mode.
 * @returns The store.
 */
export function openStore(path: string, options: StoreOptions): SessionDB {
  return SessionDB.open(path, options.journalMode ? { journalMode: options.journalMode } : {});
}

/**
 * The crash points the reference store honours.
 *
 * @returns Their names.
 */
export function crashPoints(): string[] {
  return storeCrashPoints();
}
