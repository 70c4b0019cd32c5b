/**
 * Mutant (cell 2): `claimHandoff` reads the state, then updates without the state
 * predicate: two claimants that both read `pending` both win.
 *
 * @module
 */
import type { StoreOptions } from "../../contract/target.ts";
import { mutantCrashPoints, openMutant, pause } from "./_mutant.ts";

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openMutant(path, options, ({ raw }) => ({
    claimHandoff(sessionId: string) {
      const row = raw.prepare("SELECT handoff_state FROM sessions WHERE id = ?").value<[string]>(
        sessionId,
      );
      if (row?.[0] !== "pending") return false;
      pause(20); // e.g. an await between the check and the act
      raw.prepare("UPDATE sessions SET handoff_state = 'running' WHERE id = ?").run(sessionId);
      return true;
    },
  }));
}

/** The crash points it honours. */
export function crashPoints(): string[] {
  return mutantCrashPoints(["claimHandoff"]);
}
