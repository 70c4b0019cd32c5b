/**
 * Test target: the JSON-lines store with a lock file that a killed process leaves behind
 * and nobody recovers: after a crash the store cannot be opened again, so cell 1 fails.
 *
 * @module
 */
import { JsonlStore } from "./jsonl_store.ts";

/** Opens the store, refusing while the lock file exists. */
export function openStore(path: string): JsonlStore {
  return JsonlStore.open(path, { lockFile: true });
}
