/**
 * Faulty target: in cell 2's claimant children, opening the store hangs (for 60 s), so
 * they never reach the barrier. The cell must fail at its overall deadline with their
 * stderr, and kill them.
 *
 * @module
 */
import { openMutant } from "../mutants/_mutant.ts";
import type { StoreOptions } from "../../target.ts";

/** Opens the faulty store: slowly, in a claimant. */
export async function openStore(path: string, options: StoreOptions): Promise<unknown> {
  if (Deno.mainModule.endsWith("/_claimant.ts")) {
    console.error(`claimant ${Deno.pid} stuck before the barrier: the store never opened`);
    await new Promise((resolve) => setTimeout(resolve, 60_000));
  }
  return openMutant(path, options, () => ({}));
}
