/**
 * Mutant (cell 6): `appendMessage` does not wait for the write lock (busy timeout 0)
 * and swallows SQLITE_BUSY: it returns an id it guessed as if the append had
 * committed. Under contention acknowledged appends are lost.
 *
 * @module
 */
import type { StoreOptions } from "../../contract/target.ts";
import { mutantCrashPoints, openBusyMutant } from "./_mutant.ts";

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  // "It will have gone through": the next id, as a successful append would get.
  return openBusyMutant(path, options, (raw) => Number(raw.lastInsertRowId) + 1);
}

/** The crash points it honours. */
export function crashPoints(): string[] {
  return mutantCrashPoints(["appendMessage"]);
}
