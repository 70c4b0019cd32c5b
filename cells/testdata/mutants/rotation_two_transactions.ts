/**
 * Mutant (cell 3): `publishCompressionChild` ends the parent in one transaction and
 * creates the child in a second; a crash between them leaves an orphan.
 *
 * @module
 */
import { crashPoint, defineCrashPoints } from "../../../session_db/mod.ts";
import type { StoreOptions } from "../../contract/target.ts";
import { mutantCrashPoints, type MutantParts, openMutant } from "./_mutant.ts";
import { endParent, insertChild, type Publish, requireLock } from "./_publish.ts";

const BETWEEN = "publishCompressionChild:betweenTransactions";
defineCrashPoints([BETWEEN]);

/** A rotation published as two transactions: the parent ended, `between()`, the child. */
export function publishInTwo(
  raw: MutantParts["raw"],
  publish: Publish,
  between: () => void,
): void {
  const t = Date.now() / 1000;
  raw.transaction(() => {
    requireLock(raw, publish, t);
    endParent(raw, publish, t);
  }).immediate();
  between();
  raw.transaction(() => {
    insertChild(raw, publish, t);
  }).immediate();
}

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openMutant(path, options, ({ raw }) => ({
    publishCompressionChild(publish: Publish) {
      publishInTwo(raw, publish, () => crashPoint(BETWEEN));
    },
  }));
}

/** The crash points it honours. */
export function crashPoints(): string[] {
  return mutantCrashPoints(["publishCompressionChild"], [BETWEEN]);
}
