/**
 * Test target: the JSON-lines store with its log opened `O_DSYNC` and no sync calls on it
 * (each write returns once its data is durable; the folder is synced when the log is
 * created), correct. The power-loss tiers must judge such writes durable when they return.
 *
 * @module
 */
import { JsonlStore } from "./jsonl_store.ts";
import { DsyncFile } from "./_dsync_file.ts";

/** Opens the store. */
export function openStore(path: string): JsonlStore {
  return JsonlStore.open(path, { openFile: (file) => new DsyncFile(file) });
}
