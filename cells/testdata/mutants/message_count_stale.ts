/**
 * Mutant (cell 9): `messageCount` reads the session's counter, which `appendMessages`
 * does not update (it inserts the batch's rows, all or nothing, and leaves the counter):
 * the count falls behind the rows `getMessages` returns.
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
        return messages.map((message) => {
          raw.prepare(
            "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, ?, ?, ?)",
          ).run(sessionId, message.role, message.content, Date.now() / 1000);
          return Number(raw.lastInsertRowId);
        });
      }).immediate();
    },
    messageCount(sessionId: string) {
      return raw.prepare("SELECT message_count FROM sessions WHERE id = ?")
        .value<[number]>(sessionId)?.[0] ?? 0;
    },
  }));
}

/** The crash points it honours. */
export function crashPoints(): string[] {
  return mutantCrashPoints(["appendMessages"]);
}
