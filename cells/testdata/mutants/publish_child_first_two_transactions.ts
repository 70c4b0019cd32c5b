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
import { insertChild } from "./_publish.ts";

const BETWEEN = "publishCompressionChild:betweenChildAndParent";
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
        insertChild(raw, publish, t);
      }).immediate();
      crashPoint(BETWEEN);
      raw.transaction(() => {
        raw.prepare(
          "UPDATE sessions SET ended_at = ?, end_reason = 'compression' WHERE id = ? AND ended_at IS NULL",
        ).run(t, publish.parentId);
      }).immediate();
    },
  }));
}

/** The crash points it honours. */
export function crashPoints(): string[] {
  return mutantCrashPoints(["publishCompressionChild"], [BETWEEN]);
}
