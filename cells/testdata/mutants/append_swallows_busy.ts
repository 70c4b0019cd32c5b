/**
 * Mutant (cell 6): `appendMessage` does not wait for the write lock (busy timeout 0)
 * and swallows SQLITE_BUSY: it returns an id it guessed as if the append had
 * committed. Under contention acknowledged appends are lost.
 *
 * @module
 */
import { SqliteError } from "../../../session_db/sqlite/mod.ts";
import type { StoreOptions } from "../../target.ts";
import { mutantCrashPoints, openMutant, refuseUnwritable } from "./_mutant.ts";

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openMutant(path, options, ({ raw }) => {
    raw.setBusyTimeout(0);
    return {
      appendMessage(sessionId: string, message: { role: string; content: string }) {
        try {
          return raw.transaction(() => {
            refuseUnwritable(raw, sessionId);
            raw.prepare(
              "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, ?, ?, ?)",
            ).run(sessionId, message.role, message.content, Date.now() / 1000);
            const id = Number(raw.lastInsertRowId);
            raw.prepare("UPDATE sessions SET message_count = message_count + 1 WHERE id = ?")
              .run(sessionId);
            return id;
          }).immediate();
        } catch (error) {
          if (!(error instanceof SqliteError) || (error.code & 0xff) !== 5) throw error;
          // "It will have gone through": the next id, as a successful append would get.
          return Number(raw.lastInsertRowId) + 1;
        }
      },
    };
  });
}

/** The crash points it honours. */
export function crashPoints(): string[] {
  return mutantCrashPoints(["appendMessage"]);
}
