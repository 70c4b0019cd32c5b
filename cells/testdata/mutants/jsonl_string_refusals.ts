/**
 * Mutant (typed refusals): the JSON-lines store (`../jsonl_store/target.ts`) that throws
 * its refusals as strings (`throw "Cannot append …"`): a caller cannot tell one from
 * another, so an append to a missing session is not refused with a typed error (cell 13),
 * nor a full disk (F1). Not SQLite: the default leg only.
 *
 * @module
 */
import { RethrowingStore } from "../jsonl_store/_rethrowing_store.ts";

/** Opens the mutant. */
export function openStore(path: string): RethrowingStore {
  return new RethrowingStore(path, (error) => error instanceof Error ? error.message : error);
}
