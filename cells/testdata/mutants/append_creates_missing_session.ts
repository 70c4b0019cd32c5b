/**
 * Mutant (cell 13): `appendMessage` to a session that does not exist creates the session
 * and appends to it, instead of refusing with a typed error.
 *
 * @module
 */
import type { StoreOptions } from "../../contract/target.ts";
import { insertAppend, mutantCrashPoints, openMutant, refuseUnwritable } from "./_mutant.ts";
export { plantViolation } from "../../reference_target.ts";

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openMutant(path, options, ({ raw }) => ({
    appendMessage(sessionId: string, message: { role: string; content: string }) {
      return raw.transaction(() => {
        raw.prepare("INSERT OR IGNORE INTO sessions (id, started_at) VALUES (?, ?)").run(
          sessionId,
          Date.now() / 1000,
        );
        refuseUnwritable(raw, sessionId);
        return insertAppend(raw, sessionId, message);
      }).immediate();
    },
  }));
}

/** The crash points it honours: none inside the append. */
export function crashPoints(): string[] {
  return mutantCrashPoints(["appendMessage"]);
}
