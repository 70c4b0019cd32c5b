/**
 * Mutant (cell 3), a store written elsewhere: `publishCompressionChild` ends the parent
 * in one transaction and creates the child in a second, like `rotation_two_transactions`
 * but declaring no crash point between them: only a kill inside the publish (the cell's
 * kill series over its file-system calls) can land in the gap.
 *
 * @module
 */
import type { Publish } from "./_publish.ts";
import type { StoreOptions } from "../../contract/target.ts";
import { mutantCrashPoints, openMutant } from "./_mutant.ts";
import { publishInTwo } from "./rotation_two_transactions.ts";

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openMutant(path, options, ({ raw }) => ({
    publishCompressionChild(publish: Publish) {
      publishInTwo(raw, publish, () => {});
    },
  }));
}

/** The crash points it honours: none inside the publish. */
export function crashPoints(): string[] {
  return mutantCrashPoints(["publishCompressionChild"]);
}
