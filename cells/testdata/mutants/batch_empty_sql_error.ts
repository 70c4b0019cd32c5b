/**
 * Mutant (cell 9): `appendMessages` inserts a batch with one multi-row `INSERT` built from
 * the messages, all or nothing; an empty batch builds `VALUES` with no row and throws
 * SQLite's syntax error (untyped) instead of returning `[]`.
 *
 * @module
 */
import type { StoreOptions } from "../../contract/target.ts";
import { mutantCrashPoints, openMutant, refuseUnwritable } from "./_mutant.ts";

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openMutant(path, options, ({ raw }) => ({
    appendMessages(sessionId: string, messages: { role: string; content: string }[]) {
      return raw.transaction(() => {
        refuseUnwritable(raw, sessionId);
        const t = Date.now() / 1000;
        raw.prepare(
          `INSERT INTO messages (session_id, role, content, timestamp) VALUES ${
            messages.map(() => "(?, ?, ?, ?)").join(", ")
          }`,
        ).run(...messages.flatMap((m) => [sessionId, m.role, m.content, t]));
        const last = Number(raw.lastInsertRowId);
        raw.prepare("UPDATE sessions SET message_count = message_count + ? WHERE id = ?")
          .run(messages.length, sessionId);
        return messages.map((_, i) => last - messages.length + 1 + i);
      }).immediate();
    },
  }));
}

/** The crash points it honours. */
export function crashPoints(): string[] {
  return mutantCrashPoints(["appendMessages"]);
}
