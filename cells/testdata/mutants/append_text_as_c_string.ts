/**
 * Mutant (cell 1): `appendMessage` binds a message's text as a C string (its length left to
 * the terminating NUL, as a hand-written binding passing `-1` to `sqlite3_bind_text` does):
 * a text with an embedded NUL is stored cut there, and acknowledged whole.
 *
 * @module
 */
import type { StoreOptions } from "../../contract/target.ts";
import { mutantCrashPoints, openMutant } from "./_mutant.ts";

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openMutant(path, options, ({ store }) => ({
    appendMessage(sessionId: string, message: { role: "user"; content: string }) {
      return store.appendMessage(sessionId, {
        ...message,
        content: message.content.split("\0")[0]!,
      });
    },
  }));
}

/** The crash points it honours (the append's own, which it still makes). */
export function crashPoints(): string[] {
  return mutantCrashPoints([]);
}
