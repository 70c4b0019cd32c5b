/**
 * Mutant (fault F5, short-lived processes): allocates message ids from a counter it reads
 * once per open (at its first append) and writes with `INSERT OR REPLACE`. Alone on its
 * file, or restarted after a crash, it numbers right; when another process appended since
 * it read the counter, its appends overwrite that process's acknowledged messages. Quick
 * runs of cells 1 and 6 pass it. Every other method is the reference's.
 *
 * @module
 */
import type { StoreOptions } from "../../contract/target.ts";
import { mutantCrashPoints, openMutant, refuseUnwritable } from "./_mutant.ts";

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openMutant(path, options, ({ raw }) => {
    let next: number | undefined;
    return {
      appendMessage(sessionId: string, message: { role: string; content: string }) {
        return raw.transaction(() => {
          refuseUnwritable(raw, sessionId);
          // The broken part: the counter is read once per open, not under each write's lock.
          next ??= raw.prepare("SELECT coalesce(max(id), 0) + 1 FROM messages")
            .value<[number]>()![0];
          const id = next++;
          raw.prepare(
            `INSERT OR REPLACE INTO messages (id, session_id, role, content, timestamp)
             VALUES (?, ?, ?, ?, ?)`,
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
