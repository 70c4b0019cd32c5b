/**
 * Mutant (cell 7): `completeHandoff` completes whichever claim is running, with no fence
 * on its claimant: a claimant stopped past its lease completes the claim another process
 * took over.
 *
 * @module
 */
import type { StoreOptions } from "../../contract/target.ts";
import { mutantCrashPoints, openMutant } from "./_mutant.ts";

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openMutant(path, options, ({ raw }) => ({
    completeHandoff(sessionId: string) {
      return raw.transaction(() =>
        raw.prepare(
          "UPDATE sessions SET handoff_state = 'completed' WHERE id = ? AND handoff_state = 'running'",
        ).run(sessionId) === 1
      ).immediate();
    },
  }));
}

/** The crash points it honours. */
export function crashPoints(): string[] {
  return mutantCrashPoints(["completeHandoff"]);
}
