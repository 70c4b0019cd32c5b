/**
 * Mutant (cell 12): `listPendingHandoffs` lists the running handoffs too (requested and
 * claimed), as a list of "open" handoffs would.
 *
 * @module
 */
import type { StoreOptions } from "../../contract/target.ts";
import { mutantCrashPoints, openMutant } from "./_mutant.ts";

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openMutant(path, options, ({ store, raw }) => ({
    listPendingHandoffs() {
      const ids = raw.prepare(
        `SELECT id FROM sessions WHERE handoff_state IN ('pending', 'running')
         ORDER BY started_at, id`,
      ).values<[string]>();
      return ids.map(([id]) => store.getSession(id)!);
    },
  }));
}

/** The crash points it honours. */
export function crashPoints(): string[] {
  return mutantCrashPoints(["listPendingHandoffs"]);
}
