/**
 * Test target: the reference store, correct, that refuses a `tool` message with an error of
 * its own class, changing nothing (as a store whose tool turns must name the call they answer
 * does: the contract's messages carry a role and a text alone). Every cell must take the
 * refusal as the contract allows and pass.
 *
 * @module
 */
import type { SessionDB } from "../../session_db/mod.ts";
import type { StoreOptions } from "../contract/target.ts";
import { type Method, wrapped } from "./_wrapped.ts";
import { openStore as openReference } from "./unpointed_target.ts";

/** The refusal of a tool turn that names no call. */
export class ToolCallMissingError extends Error {
  /** Builds the error for the method that refused. */
  constructor(method: string) {
    super(`Cannot store the tool message given to ${method}: it names no tool call`);
    this.name = "ToolCallMissingError";
  }
}

type Turn = { role?: unknown };

/** Which argument of each writing method holds its messages. */
const MESSAGES: Readonly<Record<string, (args: unknown[]) => readonly Turn[]>> = {
  appendMessage: (args) => [args[1] as Turn],
  appendMessages: (args) => args[1] as Turn[],
  publishCompressionChild: (args) => (args[0] as { messages: Turn[] }).messages,
};

/** Opens the store. */
export function openStore(path: string, options: StoreOptions): SessionDB {
  return wrapped(openReference(path, options), (key, method: Method) => {
    const messages = typeof key === "string" ? MESSAGES[key] : undefined;
    return messages
      ? (...args: unknown[]) => {
        if (messages(args).some((m) => m.role === "tool")) {
          throw new ToolCallMissingError(key as string);
        }
        return method(...args);
      }
      : method;
  });
}
