/**
 * Mutant (cell 6): `appendMessage` takes ids from a block of its own process (a
 * hi/lo allocator: its first append, under the write lock, claims the block after the
 * highest id in the table) instead of the table's next id. Ids stay unique and each process's ids increase, but an append
 * acknowledged in one process can get a larger id than a later append in another.
 *
 * @module
 */
import type { StoreOptions } from "../../target.ts";
import { mutantCrashPoints, openMutant, refuseUnwritable } from "./_mutant.ts";

const BLOCK = 1_000_000;

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openMutant(path, options, ({ raw }) => {
    let next = 0;
    return {
      appendMessage(sessionId: string, message: { role: string; content: string }) {
        return raw.transaction(() => {
          refuseUnwritable(raw, sessionId);
          if (next === 0) {
            const top = raw.prepare("SELECT coalesce(max(id), 0) FROM messages").value<[number]>();
            next = (Math.floor(Number(top?.[0] ?? 0) / BLOCK) + 1) * BLOCK + 1;
          }
          const id = next++;
          raw.prepare(
            "INSERT INTO messages (id, session_id, role, content, timestamp) VALUES (?, ?, ?, ?, ?)",
          ).run(id, sessionId, message.role, message.content, Date.now() / 1000);
          raw.prepare("UPDATE sessions SET message_count = message_count + 1 WHERE id = ?")
            .run(sessionId);
          return id;
        }).immediate();
      },
    };
  });
}

/** The crash points it honours. */
export function crashPoints(): string[] {
  return mutantCrashPoints(["appendMessage"]);
}
