/**
 * Mutant (cell 5, delivery policy), declares at-most-once, keeps marked-at-least-once (a
 * store keeping the origin's policy, judged under ours). It declares no crash point in its
 * sweep.
 *
 * @module
 */
import type { StoreOptions } from "../../contract/target.ts";
import { declared, openPolicyMutant, policyCrashPoints, type SweepBug } from "./_policy_mutant.ts";

const BUG: SweepBug = { policy: "marked-at-least-once", declares: "at-most-once" };

/** The delivery policy it declares. */
export const deliveryPolicy = declared(BUG);

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openPolicyMutant(path, options, BUG);
}

/** The reference store's crash points, none in the sweep. */
export const crashPoints = policyCrashPoints;
