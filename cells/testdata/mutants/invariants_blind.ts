/**
 * Mutant (cell 13): `checkInvariants` always answers `[]`, and reads serve whatever the
 * file holds: a state that breaks the store's schema rules (planted on disk by the
 * reference target's `plantViolation`) is served as if it were whole.
 *
 * @module
 */
import type { StoreOptions } from "../../contract/target.ts";
import { mutantCrashPoints, openMutant } from "./_mutant.ts";
export { plantViolation } from "../../reference_target.ts";

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openMutant(path, options, () => ({
    checkInvariants: () => [],
  }));
}

/** The crash points it honours: the reference store's. */
export function crashPoints(): string[] {
  return mutantCrashPoints([]);
}
