/**
 * Mutant (fault F2, corruption): reads a session row by row and skips every row whose page
 * SQLite finds corrupt, serving the rest as the whole transcript, where the reference
 * refuses the read with a typed error. Its ids come from the session index, which the
 * damaged table page does not hold. Every other method is the reference's.
 *
 * @module
 */
import { SqliteError } from "../../../session_db/sqlite/mod.ts";
import type { StoreOptions } from "../../contract/target.ts";
import { mutantCrashPoints, openMutant } from "./_mutant.ts";

/** SQLite's corrupt and not-a-database results. */
const DAMAGED = new Set([11, 26]);

function damaged(error: unknown): boolean {
  return error instanceof SqliteError && DAMAGED.has(error.code & 0xff);
}

interface Row {
  role: string;
  content: string | null;
  active: number;
}

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openMutant(path, options, ({ raw }) => ({
    getMessages(sessionId: string, options: { includeInactive?: boolean } = {}) {
      let ids: { id: number }[] = [];
      try {
        ids = raw.prepare("SELECT id FROM messages WHERE session_id = ? ORDER BY id")
          .all<{ id: number }>(sessionId);
      } catch (error) {
        if (!damaged(error)) throw error;
      }
      return ids.flatMap(({ id }) => {
        try {
          const row = raw.prepare("SELECT role, content, active FROM messages WHERE id = ?")
            .get<Row>(id);
          if (!row || !(options.includeInactive || row.active === 1)) return [];
          return [{ id, role: row.role, content: row.content, active: row.active === 1 }];
        } catch (error) {
          if (!damaged(error)) throw error;
          return []; // the broken part: a row it cannot read is left out, silently
        }
      });
    },
  }));
}

/** The crash points it honours. */
export function crashPoints(): string[] {
  return mutantCrashPoints(["getMessages"]);
}
