/**
 * Mutant (cell 3): `publishCompressionChild` ends the parent in one transaction and
 * creates the child in a second; a crash between them leaves an orphan.
 *
 * @module
 */
import { crashPoint, defineCrashPoints } from "../../../session_db/mod.ts";
import type { StoreOptions } from "../../target.ts";
import { mutantCrashPoints, openMutant } from "./_mutant.ts";
import { insertChild } from "./_publish.ts";

const BETWEEN = "publishCompressionChild:betweenTransactions";
defineCrashPoints([BETWEEN]);

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openMutant(path, options, ({ raw }) => ({
    publishCompressionChild(publish: {
      parentId: string;
      childId: string;
      holder: string;
      messages: { role: string; content: string }[];
    }) {
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
      crashPoint(BETWEEN);
      raw.transaction(() => {
        insertChild(raw, publish, t);
      }).immediate();
    },
  }));
}

/** The crash points it honours. */
export function crashPoints(): string[] {
  return mutantCrashPoints(["publishCompressionChild"], [BETWEEN]);
}
