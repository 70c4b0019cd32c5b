/**
 * Test target: the reference store, correct, answering every call some 40 ms after it ran
 * (as a store a network away does): an acknowledgement comes long after its commit, a
 * refusal as late. Every cell must wait for it as it is and pass.
 *
 * @module
 */
import type { SessionDB } from "../../session_db/mod.ts";
import type { StoreOptions } from "../contract/target.ts";
import { wrapped } from "./_wrapped.ts";
import { openStore as openReference } from "./unpointed_target.ts";

/** How long each answer takes after its call ran. */
const ANSWER_MS = 40;

const later = () => new Promise<void>((resolve) => setTimeout(resolve, ANSWER_MS));

/** Opens the store. */
export function openStore(path: string, options: StoreOptions): SessionDB {
  return wrapped(
    openReference(path, options),
    (key, method) =>
      key === "close" ? method : async (...args: unknown[]) => {
        try {
          return method(...args);
        } finally {
          await later();
        }
      },
  );
}
