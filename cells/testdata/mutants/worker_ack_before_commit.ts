/**
 * Mutant (cell 1): the Python worker (targets/python_sqlite3) answers a write before its
 * COMMIT; the transaction is committed when the next write starts. The client returns on
 * that answer, so a crash right after it loses the last acknowledged write.
 *
 * @module
 */
import type { StoreOptions } from "../../contract/target.ts";
import { openPythonStore, type WorkerStore } from "../../../targets/python_sqlite3/target.ts";

export { childPermissions } from "../../../targets/python_sqlite3/target.ts";

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): Promise<WorkerStore> {
  return openPythonStore(path, options, { extra: ["--mutant", "ack-before-commit"] });
}
