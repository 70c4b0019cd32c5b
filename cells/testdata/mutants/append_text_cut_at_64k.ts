/**
 * Mutant (cell 1): `appendMessage` keeps at most 65,535 bytes of a message's text (a
 * MySQL `TEXT` column, a line reader with a 64 KiB buffer) and acknowledges it whole: a long
 * tool output reads back cut.
 *
 * @module
 */
import type { StoreOptions } from "../../contract/target.ts";
import { mutantCrashPoints, openMutant } from "./_mutant.ts";

const LIMIT = 65_535;

/** `text` cut to at most `LIMIT` bytes of UTF-8 (a character cut in two is replaced). */
function cut(text: string): string {
  const bytes = new TextEncoder().encode(text);
  return bytes.length <= LIMIT ? text : new TextDecoder().decode(bytes.subarray(0, LIMIT));
}

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openMutant(path, options, ({ store }) => ({
    appendMessage(sessionId: string, message: { role: "user"; content: string }) {
      return store.appendMessage(sessionId, { ...message, content: cut(message.content) });
    },
  }));
}

/** The crash points it honours (the append's own, which it still makes). */
export function crashPoints(): string[] {
  return mutantCrashPoints([]);
}
