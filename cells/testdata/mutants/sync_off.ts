/**
 * Mutant (power-loss tier, cell 1): sessions and appends commit with
 * `synchronous=OFF`. Nothing is synced, so a power loss loses acknowledged appends (and
 * may corrupt the file), while a SIGKILL loses nothing: the SIGKILL cells stay GREEN.
 *
 * @module
 */
import type { StoreOptions } from "../../contract/target.ts";
import { mutantCrashPoints } from "./_mutant.ts";
import { openWithSynchronous } from "./_synchronous.ts";

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openWithSynchronous(path, options, "OFF");
}

/** The crash points it honours. */
export function crashPoints(): string[] {
  return mutantCrashPoints(["createSession", "appendMessage"]);
}
