/**
 * Mutant (cell 13): `forkSession` at a message id past the parent's end copies every
 * active message the parent has and returns the branch, instead of refusing. Forks at
 * one of the parent's messages are the reference store's.
 *
 * @module
 */
import type { StoreOptions } from "../../contract/target.ts";
import { mutantCrashPoints, openMutant } from "./_mutant.ts";
export { plantViolation } from "../../reference_target.ts";

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openMutant(path, options, ({ store, raw }) => ({
    forkSession(sessionId: string, atMessageId: number, newId: string) {
      const last = raw.prepare("SELECT max(id) FROM messages WHERE session_id = ?")
        .value<[number | null]>(sessionId)?.[0];
      if (last === null || last === undefined || atMessageId <= last) {
        return store.forkSession(sessionId, atMessageId, newId);
      }
      return store.forkSession(sessionId, last, newId);
    },
  }));
}

/** The crash points it honours (the reference fork's, which it still makes). */
export function crashPoints(): string[] {
  return mutantCrashPoints([]);
}
