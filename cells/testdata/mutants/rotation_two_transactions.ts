/**
 * Mutant (cell 3): `publishCompressionChild` ends the parent in one transaction and
 * creates the child in a second; a crash between them leaves an orphan.
 *
 * @module
 */
import { crashPoint, defineCrashPoints } from "../../../session_db/mod.ts";
import type { StoreOptions } from "../../contract/target.ts";
import { mutantCrashPoints, type MutantParts, openMutant } from "./_mutant.ts";
import { insertChild, type Publish } from "./_publish.ts";

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
    const lock = raw.prepare(
      "SELECT holder FROM compression_locks WHERE session_id = ? AND expires_at > ?",
    ).value<[string]>(publish.parentId, t);
    if (lock?.[0] !== publish.holder) throw new Error("lock not held");
    raw.prepare(
      "UPDATE sessions SET ended_at = ?, end_reason = 'compression' WHERE id = ? AND ended_at IS NULL",
    ).run(t, publish.parentId);
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
