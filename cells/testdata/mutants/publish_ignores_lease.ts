/**
 * Mutant (cell 7): `publishCompressionChild` does not check the compression lock at
 * all: a holder that lost its lease still publishes its rotation.
 *
 * @module
 */
import type { StoreOptions } from "../../contract/target.ts";
import { mutantCrashPoints, openMutant } from "./_mutant.ts";
import { type Publish, publishWith } from "./_publish.ts";

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openMutant(path, options, ({ raw }) => ({
    publishCompressionChild: (publish: Publish) => publishWith(raw, publish, () => true),
  }));
}

/** The crash points it honours. */
export function crashPoints(): string[] {
  return mutantCrashPoints(["publishCompressionChild"]);
}
