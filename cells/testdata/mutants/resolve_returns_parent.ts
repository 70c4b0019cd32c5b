/**
 * Mutant (cell 8): `resolveResumeSessionId` ignores rotations and returns the session it
 * was asked about, even a parent ended by compression whose continuation lives.
 *
 * @module
 */
import type { StoreOptions } from "../../contract/target.ts";
import { mutantCrashPoints, openMutant } from "./_mutant.ts";

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openMutant(path, options, () => ({
    resolveResumeSessionId(sessionId: string) {
      return sessionId;
    },
  }));
}

/** The crash points it honours: the reference store's (its publish is the reference's). */
export function crashPoints(): string[] {
  return mutantCrashPoints([]);
}
