/**
 * Test target: the reference store, correct, kept in a data folder of its own beside the
 * path it is given (`data/store.db`), as a store that owns a data directory is often
 * adapted. Every path in one folder opens the same store, so the cells must give each
 * store they open a folder of its own.
 *
 * @module
 */
import { crashPoints as storeCrashPoints, SessionDB } from "../../session_db/mod.ts";
import type { StoreOptions } from "../contract/target.ts";

/** The data folder could not be made durable: the store did not open. */
class DataFolderError extends Error {
  override name = "DataFolderError";
}

/** Opens the store in `data/` beside `path`, the folder's entry synced first. */
export function openStore(path: string, options: StoreOptions): SessionDB {
  const folder = path.slice(0, path.lastIndexOf("/")) || ".";
  try {
    Deno.mkdirSync(`${folder}/data`, { recursive: true });
    const parent = Deno.openSync(folder);
    try {
      parent.syncSync();
    } finally {
      parent.close();
    }
  } catch (error) {
    throw new DataFolderError(`Cannot make the data folder in "${folder}"`, { cause: error });
  }
  const mode = options.journalMode ? { journalMode: options.journalMode } : {};
  return SessionDB.open(`${folder}/data/store.db`, mode);
}

/** The reference store's crash points. */
export function crashPoints(): string[] {
  return storeCrashPoints();
}
