/**
 * Mutant (cell 5, delivery policy), at-most-once: books a maybe-sent obligation delivered
 * instead of unknown (a maybe-sent obligation dropped). It declares no crash point in its
 * sweep.
 *
 * @module
 */
import type { StoreOptions } from "../../contract/target.ts";
import { declared, openPolicyMutant, policyCrashPoints, type SweepBug } from "./_policy_mutant.ts";

const BUG: SweepBug = { policy: "at-most-once", maybeSent: "book delivered" };

/** The delivery policy it declares. */
export const deliveryPolicy = declared(BUG);

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openPolicyMutant(path, options, BUG);
}

/** The reference store's crash points, none in the sweep. */
export const crashPoints = policyCrashPoints;
