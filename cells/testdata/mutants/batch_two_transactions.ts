/**
 * Mutant (cell 9), a store written elsewhere: `appendMessages` commits the first half of a
 * batch and the rest in a second transaction. A crash between them leaves a partial
 * batch. It declares no crash points in it, so only a kill inside the batch (the cell's
 * kill series over its file-system calls, or a random kill) lands in the gap.
 *
 * @module
 */
import type { StoreOptions } from "../../contract/target.ts";
import { insertAppend, mutantCrashPoints, openMutant, refuseUnwritable } from "./_mutant.ts";

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openMutant(path, options, ({ raw }) => ({
    appendMessages(sessionId: string, messages: { role: string; content: string }[]) {
      const part = (some: typeof messages) =>
        raw.transaction(() => {
          refuseUnwritable(raw, sessionId);
          return some.map((message) => insertAppend(raw, sessionId, message));
        }).immediate();
      const half = Math.ceil(messages.length / 2);
      return [...part(messages.slice(0, half)), ...part(messages.slice(half))];
    },
  }));
}

/** The crash points it honours: none inside a batch. */
export function crashPoints(): string[] {
  return mutantCrashPoints(["appendMessages"]);
}
