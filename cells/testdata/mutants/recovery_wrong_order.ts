/**
 * Mutant (cell 1): recovery reads the transcript in the wrong order: `getMessages`
 * orders by content instead of `ORDER BY id` (plain SQLite without any ORDER BY
 * happens to return index order, which hides the bug; any other plan exposes it).
 * Every acknowledged row is there, but `m10` comes back before `m2`.
 *
 * @module
 */
import type { StoreOptions } from "../../contract/target.ts";
import { mutantCrashPoints, openMutant } from "./_mutant.ts";

type Row = { id: number; role: string; content: string | null; active: number };

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openMutant(path, options, ({ raw }) => ({
    getMessages(sessionId: string, read: { includeInactive?: boolean } = {}) {
      const rows = raw.prepare(
        `SELECT id, role, content, active FROM messages
         WHERE session_id = ? AND (? OR active = 1) ORDER BY content`,
      ).all<Row>(sessionId, read.includeInactive ? 1 : 0);
      return rows.map((r) => ({
        id: r.id,
        role: r.role,
        content: r.content,
        active: r.active === 1,
      }));
    },
  }));
}

/** The crash points it honours (every write is the reference store's). */
export function crashPoints(): string[] {
  return mutantCrashPoints([]);
}
