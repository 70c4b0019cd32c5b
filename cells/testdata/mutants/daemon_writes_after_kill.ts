/**
 * Mutant (cell 1): the store's writes are made by a daemon in its own session (the Python
 * worker of targets/python_sqlite3, started with setsid) that answers an append once it
 * queued it, commits its queue every 50 ms, and, when its client dies, goes on committing
 * what it queued. A kill that takes the whole tree loses the acknowledged appends still
 * queued; a kill of the direct child only would let the daemon write them after the
 * crash, and the crash would not be one.
 *
 * @module
 */
import type { StoreOptions } from "../../target.ts";
import { openPythonStore, type WorkerStore } from "../../../targets/python_sqlite3/target.ts";

export { childPermissions } from "../../../targets/python_sqlite3/target.ts";

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): Promise<WorkerStore> {
  return openPythonStore(path, options, ["--mutant", "writes-after-parent-died"], true);
}
