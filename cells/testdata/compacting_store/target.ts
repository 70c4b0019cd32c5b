/**
 * Test target: the compacting store (a log compacted into a snapshot every few lines),
 * correct.
 *
 * @module
 */
import { CompactingStore } from "./compacting_store.ts";

/** Opens the store. */
export function openStore(path: string): CompactingStore {
  return CompactingStore.open(path);
}
