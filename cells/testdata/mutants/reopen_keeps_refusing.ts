/**
 * Mutant (cell 10): `reopenSession` clears the session's end time but keeps its end
 * reason, and returns `true`; appends, guarded on the reason, are still refused.
 *
 * @module
 */
import type { StoreOptions } from "../../contract/target.ts";
import { mutantCrashPoints, openMutant } from "./_mutant.ts";

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openMutant(path, options, ({ raw }) => ({
    reopenSession(id: string) {
      return raw.transaction(() =>
        raw.prepare("UPDATE sessions SET ended_at = NULL WHERE id = ? AND ended_at IS NOT NULL")
          .run(id) === 1
      ).immediate();
    },
  }));
}

/** The crash points it honours. */
export function crashPoints(): string[] {
  return mutantCrashPoints(["reopenSession"]);
}
