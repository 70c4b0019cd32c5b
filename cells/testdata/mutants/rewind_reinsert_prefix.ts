/**
 * Mutant (cell 4): `rewindToMessage` archives every active row and re-inserts the kept
 * prefix as new rows (new ids), in one transaction. The transcript reads the same, but
 * the prefix is duplicated underneath and its ids change on every rewind.
 *
 * @module
 */
import type { StoreOptions } from "../../contract/target.ts";
import { mutantCrashPoints, openMutant } from "./_mutant.ts";

type Row = {
  id: number;
  role: string;
  content: string | null;
  tool_call_id: string | null;
  tool_calls: string | null;
  tool_name: string | null;
  timestamp: number;
};

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openMutant(path, options, ({ raw }) => ({
    rewindToMessage(
      sessionId: string,
      targetId: number,
      options: { expectedActiveIds?: readonly number[] } = {},
    ) {
      return raw.transaction(() => {
        const rows = raw.prepare(
          `SELECT id, role, content, tool_call_id, tool_calls, tool_name, timestamp FROM messages
           WHERE session_id = ? AND active = 1 ORDER BY id`,
        ).all<Row>(sessionId);
        if (!rows.some((r) => r.id === targetId && r.role === "user")) {
          throw new Error(`rewind: ${targetId} is not an active user message`);
        }
        const expected = options.expectedActiveIds;
        if (expected && expected.join() !== rows.map((r) => r.id).join()) {
          throw new Error("rewind: the active messages changed");
        }
        raw.prepare("UPDATE messages SET active = 0 WHERE session_id = ? AND active = 1").run(
          sessionId,
        );
        const kept = rows.filter((r) => r.id < targetId);
        for (const r of kept) {
          raw.prepare(
            `INSERT INTO messages (session_id, role, content, tool_call_id, tool_calls, tool_name, timestamp)
             VALUES (?, ?, ?, ?, ?, ?, ?)`,
          ).run(
            sessionId,
            r.role,
            r.content,
            r.tool_call_id,
            r.tool_calls,
            r.tool_name,
            r.timestamp,
          );
        }
        raw.prepare(
          "UPDATE sessions SET message_count = ?, rewind_count = rewind_count + 1 WHERE id = ?",
        ).run(kept.length, sessionId);
        return rows.length - kept.length;
      }).immediate();
    },
  }));
}

/** The crash points it honours. */
export function crashPoints(): string[] {
  return mutantCrashPoints(["rewindToMessage"]);
}
