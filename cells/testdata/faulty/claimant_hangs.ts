/**
 * Faulty target: in cell 2's children (the claimants and the one writing beside their
 * race), opening the store hangs (for 60 s), so they never reach the barrier. The cell
 * must fail at its overall deadline with their stderr, and kill them.
 *
 * @module
 */
import { openMutant } from "../mutants/_mutant.ts";
import type { StoreOptions } from "../../contract/target.ts";

/** Opens the faulty store: slowly, in a child of cell 2. */
export async function openStore(path: string, options: StoreOptions): Promise<unknown> {
  if (/\/children\/(claimant|last_write)\.ts$/.test(Deno.mainModule)) {
    console.error(`child ${Deno.pid} stuck before the barrier: the store never opened`);
    await new Promise((resolve) => setTimeout(resolve, 60_000));
  }
  return openMutant(path, options, () => ({}));
}
