/**
 * Test target: the reference store with only the core methods (`createSession`,
 * `appendMessage`, `getMessages`, `close`). Cell 1 runs; cells 2 to 5 must be SKIPPED,
 * each naming the methods it lacks.
 *
 * @module
 */
import { CELL_METHODS, type Store, type StoreOptions } from "../contract/target.ts";
import { openReferenceSubset } from "./_reference_subset.ts";

/** Opens the store: the core methods only (those cell 1 needs). */
export function openStore(path: string, options: StoreOptions): Store {
  return openReferenceSubset(path, options, CELL_METHODS[1]);
}
