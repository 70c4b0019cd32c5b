/**
 * Mutant (cell 5, delivery policy), at-most-once: takes an omitted `idempotentTransport`
 * for `true`, so `sweepRecoverable({})` on a plain transport resends a maybe-sent
 * obligation unmarked, as on a deduplicating one. It declares no crash point in its sweep.
 *
 * @module
 */
import type { StoreOptions } from "../../contract/target.ts";
import { declared, openPolicyMutant, policyCrashPoints, type SweepBug } from "./_policy_mutant.ts";

const BUG: SweepBug = { policy: "at-most-once", omittedIsIdempotent: true };

/** The delivery policy it declares. */
export const deliveryPolicy = declared(BUG);

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openPolicyMutant(path, options, BUG);
}

/** The reference store's crash points, none in the sweep. */
export const crashPoints = policyCrashPoints;
