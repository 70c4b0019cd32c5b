/**
 * Mutant (cell 9): `appendMessages` binds each message's text as a C string (cut at an
 * embedded NUL), while `appendMessage` keeps it whole: a store whose batch path is written
 * apart mangles only its batches.
 *
 * @module
 */
import type { StoreOptions } from "../../contract/target.ts";
import { mutantCrashPoints, openMutant } from "./_mutant.ts";

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openMutant(path, options, ({ store }) => ({
    appendMessages(sessionId: string, messages: { role: "user"; content: string }[]) {
      return store.appendMessages(
        sessionId,
        messages.map((message) => ({ ...message, content: message.content.split("\0")[0]! })),
      );
    },
  }));
}

/** The crash points it honours (the batch's own, which it still makes). */
export function crashPoints(): string[] {
  return mutantCrashPoints([]);
}
