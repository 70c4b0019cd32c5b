/**
 * Mutant (cell 12): `listPendingHandoffs` answers one page, the first 100 pending handoffs
 * (a default LIMIT): past that many at once, the rest are never listed, so never claimed.
 *
 * @module
 */
import type { StoreOptions } from "../../contract/target.ts";
import { mutantCrashPoints, openMutant } from "./_mutant.ts";

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openMutant(path, options, ({ store }) => ({
    listPendingHandoffs() {
      return store.listPendingHandoffs().slice(0, 100);
    },
  }));
}

/** The crash points it honours. */
export function crashPoints(): string[] {
  return mutantCrashPoints(["listPendingHandoffs"]);
}
