/**
 * Mutant (cell 4): `forkSession` copies the messages up to the fork point through a paged
 * read, its first page alone (1,000 messages): a branch of a longer session is cut short.
 *
 * @module
 */
import type { StoreOptions } from "../../contract/target.ts";
import { mutantCrashPoints, openMutant } from "./_mutant.ts";

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openMutant(path, options, ({ store, raw }) => ({
    forkSession(sessionId: string, atMessageId: number, newId: string) {
      const branch = store.forkSession(sessionId, atMessageId, newId);
      raw.exec(
        `DELETE FROM messages WHERE session_id = ? AND id NOT IN
           (SELECT id FROM messages WHERE session_id = ? ORDER BY id LIMIT 1000)`,
        newId,
        newId,
      );
      raw.exec(
        "UPDATE sessions SET message_count = min(message_count, 1000) WHERE id = ?",
        newId,
      );
      return branch;
    },
  }));
}

/** The crash points it honours: the reference's but its fork's. */
export function crashPoints(): string[] {
  return mutantCrashPoints(["forkSession"]);
}
