/**
 * Mutant (cell 5, delivery policy), declares marked-at-least-once, settles a maybe-sent
 * obligation unknown (a maybe-sent obligation dropped: a store keeping ours, judged under
 * the origin's). It declares no crash point in its sweep.
 *
 * @module
 */
import type { StoreOptions } from "../../contract/target.ts";
import { declared, openPolicyMutant, policyCrashPoints, type SweepBug } from "./_policy_mutant.ts";

const BUG: SweepBug = { policy: "at-most-once", declares: "marked-at-least-once" };

/** The delivery policy it declares. */
export const deliveryPolicy = declared(BUG);

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openPolicyMutant(path, options, BUG);
}

/** The reference store's crash points, none in the sweep. */
export const crashPoints = policyCrashPoints;
