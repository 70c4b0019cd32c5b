/**
 * Mutant (cell 6): `appendMessage` does not wait for the write lock (busy timeout 0)
 * and, on SQLITE_BUSY, ends the process with exit code 0 — the agent that dies
 * mid-turn and looks as if it finished.
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
          if (error instanceof SqliteError && (error.code & 0xff) === 5) Deno.exit(0);
          throw error;
        }
      },
    };
  });
}

/** The crash points it honours. */
export function crashPoints(): string[] {
  return mutantCrashPoints(["appendMessage"]);
}
