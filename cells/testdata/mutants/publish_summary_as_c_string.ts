/**
 * Mutant (cell 3): `publishCompressionChild` binds the child's messages' texts as C strings
 * (cut at an embedded NUL), while appends keep them whole: a store whose rotation path is
 * written apart mangles only its summaries.
 *
 * @module
 */
import type { StoreOptions } from "../../contract/target.ts";
import { mutantCrashPoints, openMutant } from "./_mutant.ts";

type Publish = {
  parentId: string;
  childId: string;
  holder: string;
  messages: { role: "system"; content: string }[];
};

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openMutant(path, options, ({ store }) => ({
    publishCompressionChild(publish: Publish) {
      return store.publishCompressionChild({
        ...publish,
        messages: publish.messages.map((m) => ({ ...m, content: m.content.split("\0")[0]! })),
      });
    },
  }));
}

/** The crash points it honours (the rotation's own, which it still makes). */
export function crashPoints(): string[] {
  return mutantCrashPoints([]);
}
