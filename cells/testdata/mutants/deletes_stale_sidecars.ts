/**
 * Mutant (fault tier, F4): at open it deletes the `-wal`, `-shm` and `-journal` files it
 * finds, taking them for leftovers of a crashed run, without asking whether another
 * process has the store open. A second process that opens the store while a first one
 * writes pulls the first one's `-wal` and `-shm` from under it (their acknowledged
 * frames then live only in a file no later opener sees).
 *
 * @module
 */
import { SessionDB } from "../../../session_db/mod.ts";
import type { StoreOptions } from "../../contract/target.ts";

/** Opens the mutant: removes the sidecars it takes for stale, then the reference store. */
export function openStore(path: string, options: StoreOptions): SessionDB {
  for (const suffix of ["-wal", "-shm", "-journal"]) {
    try {
      Deno.removeSync(`${path}${suffix}`);
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
  }
  return SessionDB.open(path, options.journalMode ? { journalMode: options.journalMode } : {});
}
