/**
 * Mutant (cells 1, 3, 4 and 9): a messages table without a role column, every message read
 * back as the user's. Each text, id and transaction is kept: only the roles of appends,
 * batches and a rotation's summary are lost (a fork copies what was stored).
 *
 * @module
 */
import type { StoreOptions } from "../../contract/target.ts";
import type { CompressionPublish, NewMessage } from "../../../session_db/mod.ts";
import { mutantCrashPoints, openMutant } from "./_mutant.ts";

/** The message as this store keeps it: the user's. */
const asUser = (message: NewMessage): NewMessage => ({ ...message, role: "user" });

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openMutant(path, options, ({ store }) => ({
    appendMessage(sessionId: string, message: NewMessage) {
      return store.appendMessage(sessionId, asUser(message));
    },
    appendMessages(sessionId: string, messages: NewMessage[]) {
      return store.appendMessages(sessionId, messages.map(asUser));
    },
    publishCompressionChild(publish: CompressionPublish) {
      return store.publishCompressionChild({
        ...publish,
        messages: publish.messages.map(asUser),
      });
    },
  }));
}

/** The crash points it honours: the reference's own, which its methods still make. */
export function crashPoints(): string[] {
  return mutantCrashPoints([]);
}
