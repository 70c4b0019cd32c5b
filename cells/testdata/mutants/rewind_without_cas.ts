/**
 * Mutant (cell 4): `rewindToMessage` ignores `expectedActiveIds`: a rewind computed
 * from a stale transcript goes through and deactivates a message another writer
 * appended after the caller looked (no compare-and-swap).
 *
 * @module
 */
import type { StoreOptions } from "../../contract/target.ts";
import { mutantCrashPoints, openMutant } from "./_mutant.ts";

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openMutant(path, options, ({ store }) => ({
    rewindToMessage(
      sessionId: string,
      targetId: number,
      _options: { expectedActiveIds?: readonly number[] } = {},
    ) {
      return store.rewindToMessage(sessionId, targetId, {});
    },
  }));
}

/** The crash points it honours (it delegates, so all of them). */
export function crashPoints(): string[] {
  return mutantCrashPoints([]);
}
