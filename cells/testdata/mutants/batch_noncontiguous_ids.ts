/**
 * Mutant (cell 9): message ids come from a hi/lo allocator, each process reserving a block
 * of 8 ids at a time from the id sequence (in a transaction of its own) and handing them
 * out as it appends; a batch is inserted all or nothing under those ids. A batch that
 * runs past its process's block continues in a later block, so with two processes
 * appending at once another process's block (its messages) sits between the batch's
 * first and last id.
 *
 * @module
 */
import type { Database } from "../../../session_db/mod.ts";
import type { StoreOptions } from "../../contract/target.ts";
import { mutantCrashPoints, openMutant, refuseUnwritable } from "./_mutant.ts";

const BLOCK = 8;

/** Reserves the next block of ids: its first id. */
function reserveBlock(raw: Database): number {
  return raw.transaction(() => {
    const max = raw.prepare("SELECT coalesce(max(id), 0) FROM messages").value<[number]>()![0];
    const seq = raw.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'messages'")
      .value<[number]>()?.[0];
    const first = Math.max(max, seq ?? 0) + 1;
    const end = first + BLOCK - 1;
    if (seq === undefined) {
      raw.prepare("INSERT INTO sqlite_sequence (name, seq) VALUES ('messages', ?)").run(end);
    } else raw.prepare("UPDATE sqlite_sequence SET seq = ? WHERE name = 'messages'").run(end);
    return first;
  }).immediate();
}

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  let next = 0;
  let end = 0;
  return openMutant(path, options, ({ raw }) => {
    // Two writers at once in DELETE mode wait longer for the lock than the default 5 s.
    raw.setBusyTimeout(60_000);
    return {
      appendMessages(sessionId: string, messages: { role: string; content: string }[]) {
        const ids = messages.map(() => {
          if (next >= end) {
            next = reserveBlock(raw);
            end = next + BLOCK;
          }
          return next++;
        });
        raw.transaction(() => {
          refuseUnwritable(raw, sessionId);
          messages.forEach((message, i) =>
            raw.prepare(
              "INSERT INTO messages (id, session_id, role, content, timestamp) VALUES (?, ?, ?, ?, ?)",
            ).run(ids[i]!, sessionId, message.role, message.content, Date.now() / 1000)
          );
          raw.prepare("UPDATE sessions SET message_count = message_count + ? WHERE id = ?")
            .run(messages.length, sessionId);
        }).immediate();
        return ids;
      },
    };
  });
}

/** The crash points it honours. */
export function crashPoints(): string[] {
  return mutantCrashPoints(["appendMessages"]);
}
