/**
 * Test target: the JSON-lines store, correct (it drops a torn tail on open). Every cell
 * it has the methods for must pass on the default leg; the journal-mode legs are not
 * applicable to it and SKIP with that reason.
 *
 * @module
 */
import { JsonlStore } from "./jsonl_store.ts";

/** Opens the store. */
export function openStore(path: string): JsonlStore {
  return JsonlStore.open(path);
}
