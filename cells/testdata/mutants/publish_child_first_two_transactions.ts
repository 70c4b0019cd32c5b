/**
 * Mutant (cell 3): `publishCompressionChild` creates the child with its messages in
 * one transaction and ends the parent in a second (the opposite order of
 * `rotation_two_transactions`). A crash between them leaves no orphan but a half
 * rotation: the child exists while the parent is still open and writable.
 *
 * @module
 */
import { crashPoint, defineCrashPoints } from "../../../session_db/mod.ts";
import type { StoreOptions } from "../../contract/target.ts";
import { mutantCrashPoints, openMutant } from "./_mutant.ts";
import { endParent, insertChild, type Publish, requireLock } from "./_publish.ts";

const BETWEEN = "publishCompressionChild:betweenChildAndParent";
defineCrashPoints([BETWEEN]);

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openMutant(path, options, ({ raw }) => ({
    publishCompressionChild(publish: Publish) {
      const t = Date.now() / 1000;
      raw.transaction(() => {
        requireLock(raw, publish, t);
        insertChild(raw, publish, t);
      }).immediate();
      crashPoint(BETWEEN);
      raw.transaction(() => endParent(raw, publish, t)).immediate();
    },
  }));
}

/** The crash points it honours. */
export function crashPoints(): string[] {
  return mutantCrashPoints(["publishCompressionChild"], [BETWEEN]);
}
