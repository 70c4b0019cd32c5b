/**
 * Mutant (cell 1): takes an append identical to a message already in the session (the same
 * role and text) for a retry of it, as a unique key on the text or a hash of it does: it
 * answers the earlier message's id and stores nothing, losing a turn a user repeated.
 *
 * @module
 */
import type { NewMessage } from "../../../session_db/mod.ts";
import type { StoreOptions } from "../../contract/target.ts";
import { mutantCrashPoints, openMutant } from "./_mutant.ts";

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openMutant(path, options, ({ store, raw }) => ({
    appendMessage(sessionId: string, message: NewMessage) {
      const same = raw.prepare(
        "SELECT id FROM messages WHERE session_id = ? AND role = ? AND content = ? AND active = 1",
      ).get<{ id: number }>(sessionId, message.role, message.content);
      return same ? same.id : store.appendMessage(sessionId, message);
    },
  }));
}

/** The crash points it honours: the reference's own, which its appends still make. */
export function crashPoints(): string[] {
  return mutantCrashPoints([]);
}
