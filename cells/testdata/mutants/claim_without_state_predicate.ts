/**
 * Mutant (cell 2): `claimHandoff` is one UPDATE, but without the state predicate
 * (`WHERE id = ?` instead of `WHERE id = ? AND handoff_state = 'pending'`): every
 * claimant changes one row, so every claimant wins.
 *
 * @module
 */
import type { StoreOptions } from "../../contract/target.ts";
import { mutantCrashPoints, openMutant } from "./_mutant.ts";

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openMutant(path, options, ({ raw }) => ({
    claimHandoff(sessionId: string) {
      return raw.transaction(() =>
        raw.prepare("UPDATE sessions SET handoff_state = 'running' WHERE id = ?").run(
          sessionId,
        ) === 1
      ).immediate();
    },
  }));
}

/** The crash points it honours. */
export function crashPoints(): string[] {
  return mutantCrashPoints(["claimHandoff"]);
}
