/**
 * Mutant (cell 6): `appendMessage` does not wait for the write lock (busy timeout 0)
 * and, on SQLITE_BUSY, ends the process with exit code 0 — the agent that dies
 * mid-turn and looks as if it finished.
 *
 * @module
 */
import type { StoreOptions } from "../../target.ts";
import { immediateAppend, isBusy, mutantCrashPoints, openMutant } from "./_mutant.ts";

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openMutant(path, options, ({ raw }) => {
    raw.setBusyTimeout(0);
    return {
      appendMessage(sessionId: string, message: { role: string; content: string }) {
        try {
          return immediateAppend(raw, sessionId, message);
        } catch (error) {
          if (isBusy(error)) Deno.exit(0);
          throw error;
        }
      },
    };
  });
}

/** The crash points it honours. */
export function crashPoints(): string[] {
  return mutantCrashPoints(["appendMessage"]);
}
