/**
 * Mutant (cell 1): `appendMessage` returns the row id before COMMIT; the transaction
 * is committed only when the next append starts. A crash loses the last acknowledged
 * append.
 *
 * @module
 */
import type { StoreOptions } from "../../contract/target.ts";
import { mutantCrashPoints, openMutant, refuseUnwritable } from "./_mutant.ts";

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openMutant(path, options, ({ raw }) => ({
    appendMessage(sessionId: string, message: { role: string; content: string }) {
      if (raw.inTransaction) raw.exec("COMMIT");
      raw.exec("BEGIN IMMEDIATE");
      refuseUnwritable(raw, sessionId);
      raw.prepare(
        "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, ?, ?, ?)",
      ).run(sessionId, message.role, message.content, Date.now() / 1000);
      const id = Number(raw.lastInsertRowId);
      raw.prepare("UPDATE sessions SET message_count = message_count + 1 WHERE id = ?").run(
        sessionId,
      );
      return id; // acknowledged, not committed
    },
  }));
}

/** The crash points it honours. */
export function crashPoints(): string[] {
  return mutantCrashPoints(["appendMessage"]);
}
