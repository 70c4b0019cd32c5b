/**
 * Mutant (cell 5): every boot rewrites a state file of its own beside the database
 * (`outbox-state.json`, its boot count and pid), so a later boot that claims nothing still
 * changes the store's folder. Otherwise the reference store, with its crash points.
 *
 * @module
 */
import { dirname, join } from "node:path";
import type { StoreOptions } from "../../contract/target.ts";
import { mutantCrashPoints, openMutant } from "./_mutant.ts";

/** Opens the mutant: the reference store, then its state file rewritten. */
export function openStore(path: string, options: StoreOptions): unknown {
  const store = openMutant(path, options, () => ({}));
  const state = join(dirname(path), "outbox-state.json");
  let boots = 0;
  try {
    boots = (JSON.parse(Deno.readTextFileSync(state)) as { boots: number }).boots;
  } catch {
    // None yet, or torn by a boot killed while writing it: start again.
  }
  Deno.writeTextFileSync(state, JSON.stringify({ boots: boots + 1, pid: Deno.pid }));
  return store;
}

/** The reference store's crash points. */
export function crashPoints(): string[] {
  return mutantCrashPoints([]);
}
