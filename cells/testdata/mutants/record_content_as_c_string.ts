/**
 * Mutant (cell 5): `recordObligation` binds the obligation's content as a C string (cut at an
 * embedded NUL), while appends keep texts whole: a store whose outbox path is written apart
 * delivers a cut effect.
 *
 * @module
 */
import type { StoreOptions } from "../../contract/target.ts";
import { mutantCrashPoints, openMutant } from "./_mutant.ts";

type Obligation = { sessionId: string; messageRef: string; content: string };

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openMutant(path, options, ({ store }) => ({
    recordObligation(obligation: Obligation) {
      return store.recordObligation({
        ...obligation,
        content: obligation.content.split("\0")[0]!,
      });
    },
  }));
}

/** The crash points it honours (the outbox's own, which it still makes). */
export function crashPoints(): string[] {
  return mutantCrashPoints([]);
}
