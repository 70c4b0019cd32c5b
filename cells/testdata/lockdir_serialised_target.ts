/**
 * Test target: the reference store, correct, that serialises its processes with a lock
 * directory of its own (`<path>.lock`, taken by a rename of a folder holding its pid, as
 * proper-lockfile's mkdir lock is taken): its open and every call are made under it. No
 * other process moves inside one of its operations, so the stop series must stop it before
 * taking that lock (a name made only if missing), not only before SQLite's. Its liveness
 * check is the holder's pid alone: a lock copied into a recovered state whose pid another
 * process has since taken is waited for without end, so it is for the SIGKILL cells only.
 *
 * @module
 */
import type { SessionDB } from "../../session_db/mod.ts";
import type { StoreOptions } from "../contract/target.ts";
import { dirLock, serialised } from "./_wrapped.ts";

/** Opens the store, each of its calls under the lock directory. */
export function openStore(path: string, options: StoreOptions): SessionDB {
  return serialised(path, options, dirLock(`${path}.lock`));
}
