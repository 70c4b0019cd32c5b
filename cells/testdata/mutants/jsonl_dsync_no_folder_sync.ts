/**
 * Mutant (power loss): the JSON-lines store with its log opened `O_DSYNC`
 * (`../jsonl_store/dsync_target.ts`) that never syncs the folder after creating the log.
 * Each write is durable when it returns, but the log's name is not: a power loss before
 * anything else syncs the folder loses the whole log with its acknowledged appends. A
 * SIGKILL keeps the name, so no crash cell sees it. Not SQLite: the default leg only.
 *
 * @module
 */
import { JsonlStore } from "../jsonl_store/jsonl_store.ts";
import { DsyncFile } from "../jsonl_store/_dsync_file.ts";

/** Opens the mutant. */
export function openStore(path: string): JsonlStore {
  return JsonlStore.open(path, { openFile: (file) => new DsyncFile(file), syncNewLog: false });
}
