/**
 * Test target: the reference store, correct, that refuses a text holding a NUL with an error
 * of its own class, changing nothing (as a store on an engine whose text type cannot hold
 * one does): an append, a batch, a rotation's summary or an obligation's content. Every cell
 * must take the refusal as the contract allows and pass.
 *
 * @module
 */
import type { SessionDB } from "../../session_db/mod.ts";
import type { StoreOptions } from "../contract/target.ts";
import { type Method, wrapped } from "./_wrapped.ts";
import { openStore as openReference } from "./unpointed_target.ts";

/** The refusal of a text the store cannot keep. */
export class TextRefusedError extends Error {
  /** Builds the error for the method that refused. */
  constructor(method: string) {
    super(`Cannot store the text given to ${method}: it holds a NUL character`);
    this.name = "TextRefusedError";
  }
}

type Texted = { content?: unknown };

function refuseNul(method: string, texts: readonly Texted[]): void {
  if (texts.some((t) => typeof t.content === "string" && t.content.includes("\0"))) {
    throw new TextRefusedError(method);
  }
}

/** Which argument of each writing method holds its texts. */
const TEXTS: Readonly<Record<string, (args: unknown[]) => readonly Texted[]>> = {
  appendMessage: (args) => [args[1] as Texted],
  appendMessages: (args) => args[1] as Texted[],
  publishCompressionChild: (args) => (args[0] as { messages: Texted[] }).messages,
  recordObligation: (args) => [args[0] as Texted],
};

/** Opens the store. */
export function openStore(path: string, options: StoreOptions): SessionDB {
  return wrapped(openReference(path, options), (key, method: Method) => {
    const texts = typeof key === "string" ? TEXTS[key] : undefined;
    return texts
      ? (...args: unknown[]) => {
        refuseNul(key as string, texts(args));
        return method(...args);
      }
      : method;
  });
}
