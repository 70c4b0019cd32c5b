/**
 * Mutant (cell 8), a store written elsewhere: `publishCompressionChild` ends the parent in
 * one transaction and creates the child in a second (as `rotation_two_transactions_unmarked`,
 * no crash point between them), and the store has no orphan recovery: no
 * `reopenOrphanedCompressionSession`, nothing at open. A rotator killed between the two
 * strands its chain: no live tip takes an append.
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
    // No orphan recovery at all: the method is absent.
    reopenOrphanedCompressionSession: undefined as never,
  }));
}

/** The crash points it honours: none inside the publish. */
export function crashPoints(): string[] {
  return mutantCrashPoints(["publishCompressionChild"]);
}
