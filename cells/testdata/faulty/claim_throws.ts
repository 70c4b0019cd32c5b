/**
 * Faulty target: `claimHandoff` throws, so claimants exit 1. Cell 2 must fail and show
 * the stderr, never count exit 1 as a clean loss.
 *
 * @module
 */
import { openMutant } from "../mutants/_mutant.ts";
import type { StoreOptions } from "../../contract/target.ts";

/** Opens the faulty store. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openMutant(path, options, () => ({
    claimHandoff() {
      throw new Error("claimant exploded: the handoff table is on fire");
    },
  }));
}
