/**
 * Mutant (cell 13): `appendMessage` to a session that does not exist throws a plain
 * `Error` instead of a typed one: it changes nothing, but a caller cannot tell the
 * refusal from a crash of the store (`cells/contract/typed.ts`).
 *
 * @module
 */
import type { StoreOptions } from "../../contract/target.ts";
import { mutantCrashPoints, openMutant } from "./_mutant.ts";
export { plantViolation } from "../../reference_target.ts";

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openMutant(path, options, ({ store }) => ({
    appendMessage(sessionId: string, message: { role: "user"; content: string }) {
      if (!store.getSession(sessionId)) throw new Error(`No session "${sessionId}"`);
      return store.appendMessage(sessionId, message);
    },
  }));
}

/** The crash points it honours (the append's own, which it still makes). */
export function crashPoints(): string[] {
  return mutantCrashPoints([]);
}
