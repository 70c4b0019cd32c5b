/**
 * Mutant (cell 8): `findLiveCompressionChild` returns the newest continuation of a session
 * even when that continuation has ended (rotated on in its turn).
 *
 * @module
 */
import type { StoreOptions } from "../../contract/target.ts";
import { mutantCrashPoints, openMutant } from "./_mutant.ts";

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openMutant(path, options, ({ store, raw }) => ({
    findLiveCompressionChild(parentId: string) {
      const row = raw.prepare(
        `SELECT id FROM sessions WHERE parent_session_id = ? AND branch_kind = 'continuation'
         ORDER BY started_at DESC, id DESC LIMIT 1`,
      ).value<[string]>(parentId);
      return row ? store.getSession(row[0]) : undefined;
    },
  }));
}

/** The crash points it honours: the reference store's. */
export function crashPoints(): string[] {
  return mutantCrashPoints([]);
}
