/**
 * Test target: the JSON-lines store, correct, that keeps its log in its path's folder under
 * a name of its own (`journal.log`), as a store that takes a folder is often adapted: every
 * tier must judge what it writes there, not only files named after the path.
 *
 * @module
 */
import { JsonlStore } from "./jsonl_store.ts";

/** Opens the store. */
export function openStore(path: string): JsonlStore {
  return JsonlStore.open(`${path.slice(0, path.lastIndexOf("/")) || "."}/journal.log`);
}
