/**
 * Mutant (cell 5): a sweep that claims at most two obligations per call, leaving the rest
 * of the owed set to some later sweep (at-most-once otherwise). It declares no crash point
 * in its sweep.
 *
 * @module
 */
import type { StoreOptions } from "../../contract/target.ts";
import { declared, openPolicyMutant, policyCrashPoints, type SweepBug } from "./_policy_mutant.ts";

const BUG: SweepBug = { policy: "at-most-once", cap: 2 };

/** The delivery policy it declares. */
export const deliveryPolicy = declared(BUG);

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openPolicyMutant(path, options, BUG);
}

/** The reference store's crash points, none in the sweep. */
export const crashPoints = policyCrashPoints;
