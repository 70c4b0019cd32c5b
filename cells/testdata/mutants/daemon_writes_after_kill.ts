/**
 * Mutant (cell 1): the store's writes are made by a daemon in its own session (the Python
 * worker of targets/python_sqlite3, started with setsid) that answers an append once it
 * queued it and commits whatever is queued, one transaction after another; when its
 * client dies it goes on committing what it queued. A kill that takes the whole tree
 * loses the acknowledged appends still queued. Under a kill of the direct child only, the
 * daemon writes them after the crash and cell 1 passes it (measured with
 * `CELLS_PROCESS_TREE=none`): that crash was not one.
 *
 * @module
 */
import type { StoreOptions } from "../../contract/target.ts";
import { openPythonStore, type WorkerStore } from "../../../targets/python_sqlite3/target.ts";

export { childPermissions } from "../../../targets/python_sqlite3/target.ts";

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): Promise<WorkerStore> {
  return openPythonStore(path, options, {
    extra: ["--mutant", "writes-after-parent-died"],
    detached: true,
  });
}
