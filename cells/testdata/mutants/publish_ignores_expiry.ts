/**
 * Mutant (cell 7): `publishCompressionChild` checks that the caller is the lock's
 * holder but not that its lease is still running: a holder stopped past its lease
 * publishes when nobody has taken the lock over yet.
 *
 * @module
 */
import type { StoreOptions } from "../../contract/target.ts";
import { mutantCrashPoints, openMutant } from "./_mutant.ts";
import { type Publish, publishWith } from "./_publish.ts";

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openMutant(path, options, ({ raw }) => ({
    publishCompressionChild: (publish: Publish) =>
      publishWith(raw, publish, (lock) => lock?.holder === publish.holder),
  }));
}

/** The crash points it honours. */
export function crashPoints(): string[] {
  return mutantCrashPoints(["publishCompressionChild"]);
}
