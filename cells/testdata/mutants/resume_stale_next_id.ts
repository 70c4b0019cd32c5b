/**
 * Mutant (resume after recovery): `appendMessage` takes the new row's id from a counter
 * of its own (`mutant_next_id`) and bumps the counter in a second transaction after the
 * message commits (so do the other writers of messages, after theirs). A crash between
 * the two leaves the counter at the last message's id: the recovered store reads right
 * (every message, in id order, invariants clean), but the first append after recovery
 * takes that id again and `INSERT OR REPLACE` overwrites the last message. It declares no
 * crash point in the methods it changes: only a kill inside an append (or a power loss)
 * leaves the state, and only a second life on it shows the damage.
 *
 * @module
 */
import type { Database } from "../../../session_db/mod.ts";
import type { StoreOptions } from "../../contract/target.ts";
import { mutantCrashPoints, openMutant, refuseUnwritable } from "./_mutant.ts";

const CHANGED = ["appendMessage", "appendMessages", "publishCompressionChild", "forkSession"];

/** The id the counter gives, or one past the largest when it has none yet. */
function nextId(raw: Database): number {
  const kept = raw.prepare("SELECT next FROM mutant_next_id").value<[number]>()?.[0];
  return kept ?? raw.prepare("SELECT coalesce(max(id), 0) + 1 FROM messages").value<[number]>()![0];
}

/** Sets the counter, in a transaction of its own. */
function bump(raw: Database, next: number): void {
  raw.transaction(() =>
    raw.prepare("INSERT OR REPLACE INTO mutant_next_id (one, next) VALUES (1, ?)").run(next)
  ).immediate();
}

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openMutant(path, options, ({ store, raw }) => {
    raw.exec(
      "CREATE TABLE IF NOT EXISTS mutant_next_id (one INTEGER PRIMARY KEY CHECK (one = 1), next INTEGER NOT NULL)",
    );
    const largest = () =>
      raw.prepare("SELECT coalesce(max(id), 0) + 1 FROM messages").value<[number]>()![0];
    // The reference store's other writers of messages, each followed by the counter's bump.
    const thenBump = <A extends unknown[], R>(method: (...args: A) => R) => (...args: A): R => {
      const result = method.apply(store, args);
      bump(raw, largest());
      return result;
    };
    return {
      appendMessage(sessionId: string, message: { role: string; content: string }) {
        const id = raw.transaction(() => {
          refuseUnwritable(raw, sessionId);
          const next = nextId(raw);
          raw.prepare(
            "INSERT OR REPLACE INTO messages (id, session_id, role, content, timestamp) VALUES (?, ?, ?, ?, ?)",
          ).run(next, sessionId, message.role, message.content, Date.now() / 1000);
          raw.prepare("UPDATE sessions SET message_count = message_count + 1 WHERE id = ?").run(
            sessionId,
          );
          return next;
        }).immediate();
        bump(raw, id + 1); // a crash before this leaves the counter at `id`
        return id;
      },
      appendMessages: thenBump(store.appendMessages),
      publishCompressionChild: thenBump(store.publishCompressionChild),
      forkSession: thenBump(store.forkSession),
    };
  });
}

/** The crash points it honours: none in the methods it changes. */
export function crashPoints(): string[] {
  return mutantCrashPoints(CHANGED);
}
