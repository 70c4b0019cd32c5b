/**
 * Mutant (cell 6): `appendMessage` does not wait for the write lock (busy timeout 0)
 * and, on SQLITE_BUSY, ends the process with exit code 0 — the agent that dies
 * mid-turn and looks as if it finished.
 *
 * @module
 */
import type { StoreOptions } from "../../contract/target.ts";
import { mutantCrashPoints, openBusyMutant } from "./_mutant.ts";

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openBusyMutant(path, options, () => Deno.exit(0));
}

/** The crash points it honours. */
export function crashPoints(): string[] {
  return mutantCrashPoints(["appendMessage"]);
}
