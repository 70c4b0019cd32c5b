/**
 * Mutant (cell 3): keeps a rotation's summary as the continuation's opening and drops the
 * turns carried over with it: `publishCompressionChild` inserts the first message of the
 * handoff alone, in the one transaction the reference uses, and acknowledges the whole.
 *
 * @module
 */
import type { CompressionPublish } from "../../../session_db/mod.ts";
import type { StoreOptions } from "../../contract/target.ts";
import { mutantCrashPoints, openMutant } from "./_mutant.ts";

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openMutant(path, options, ({ store }) => ({
    publishCompressionChild(publish: CompressionPublish) {
      return store.publishCompressionChild({ ...publish, messages: publish.messages.slice(0, 1) });
    },
  }));
}

/** The crash points it honours: the reference's own, which its publish still makes. */
export function crashPoints(): string[] {
  return mutantCrashPoints([]);
}
