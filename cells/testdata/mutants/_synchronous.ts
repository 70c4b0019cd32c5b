// A store whose sessions and appends commit with a chosen `PRAGMA synchronous` on a
// connection of its own, the rest being the reference store: the power-loss tier's
// writer for each durability setting, and the base of the sync_off and delete_full
// mutants. Under SIGKILL it is as correct as the reference (the page cache survives);
// only a power loss shows the difference.
import { CompressionSessionClosedError, SessionNotFoundError } from "../../../session_db/mod.ts";
import type { StoreOptions } from "../../contract/target.ts";
import { openMutant } from "./_mutant.ts";

/** A `PRAGMA synchronous` level. */
export type Synchronous = "OFF" | "NORMAL" | "FULL" | "EXTRA";

/** The levels, weakest first. */
export const SYNCHRONOUS_LEVELS: readonly Synchronous[] = ["OFF", "NORMAL", "FULL", "EXTRA"];

/**
 * Opens the reference store with `createSession` and `appendMessage` committed at
 * `synchronous` instead of the store's policy.
 *
 * @param path The database file.
 * @param options The leg's journal mode.
 * @param synchronous The level the writes commit with.
 * @returns The store.
 */
export function openWithSynchronous(
  path: string,
  options: StoreOptions,
  synchronous: Synchronous,
): unknown {
  return openMutant(path, options, ({ store, raw }) => {
    raw.exec(`PRAGMA synchronous = ${synchronous}`);
    const insertSession = raw.prepare(
      "INSERT INTO sessions (id, source, started_at) VALUES (?, 'cli', ?) ON CONFLICT(id) DO NOTHING",
    );
    const readSession = raw.prepare("SELECT end_reason FROM sessions WHERE id = ?");
    const insertMessage = raw.prepare(
      "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, ?, ?, ?)",
    );
    const count = raw.prepare(
      "UPDATE sessions SET message_count = message_count + 1 WHERE id = ?",
    );
    const write = <T>(fn: () => T): T => raw.transaction(fn).immediate();
    return {
      createSession(id: string) {
        write(() => insertSession.run(id, Date.now() / 1000));
        return store.getSession(id);
      },
      appendMessage(sessionId: string, message: { role: string; content: string }) {
        return write(() => {
          const session = readSession.get<{ end_reason: string | null }>(sessionId);
          if (!session) {
            throw new SessionNotFoundError(`Cannot append to session "${sessionId}": not found`);
          }
          if (session.end_reason === "compression") {
            throw new CompressionSessionClosedError(
              `Cannot append to session "${sessionId}": it was rotated by compression`,
            );
          }
          insertMessage.run(sessionId, message.role, message.content, Date.now() / 1000);
          const id = Number(raw.lastInsertRowId);
          count.run(sessionId);
          return id;
        });
      },
    };
  });
}
