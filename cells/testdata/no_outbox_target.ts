/**
 * Test target: the reference store without the delivery outbox (no `recordObligation`,
 * `markAttempting`, `markDelivered`, `sweepRecoverable`, `listObligations`, …). Cell 5
 * must be SKIPPED with a reason naming the missing methods; cells 1 to 4 still run.
 *
 * @module
 */
import { CELL_METHODS, type Store, type StoreOptions } from "../contract/target.ts";
import { openReferenceSubset } from "./_reference_subset.ts";

/** Opens the store: what cells 1 to 4 need, `checkInvariants` and `getSession`; no outbox. */
export function openStore(path: string, options: StoreOptions): Store {
  const methods = new Set(([1, 2, 3, 4] as const).flatMap((cell) => CELL_METHODS[cell]));
  return openReferenceSubset(path, options, [...methods, "checkInvariants", "getSession"]);
}
