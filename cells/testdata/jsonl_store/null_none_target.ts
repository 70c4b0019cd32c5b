/**
 * Test target: the JSON-lines store, correct, handed out as a plain object of closures
 * whose `getSession` answers `null` for a session it does not hold (as a store on a driver
 * whose `get()` answers `null` does): the cells must read it as none.
 *
 * @module
 */
import type { CellMessage, StoredMessage, StoredSession } from "../../contract/target.ts";
import { JsonlStore } from "./jsonl_store.ts";

/** The store's methods as closures over the JSON-lines store. */
export interface NullNoneStore {
  createSession(id: string): void;
  appendMessage(sessionId: string, message: CellMessage): number;
  getMessages(sessionId: string): StoredMessage[];
  getSession(id: string): StoredSession | null;
  listSessions(): StoredSession[];
  checkInvariants(): string[];
  close(): void;
}

/** Opens the store. */
export function openStore(path: string): NullNoneStore {
  const store = JsonlStore.open(path);
  return {
    createSession: (id) => store.createSession(id),
    appendMessage: (sessionId, message) => store.appendMessage(sessionId, message),
    getMessages: (sessionId) => store.getMessages(sessionId),
    getSession: (id) => store.getSession(id) ?? null,
    listSessions: () => store.listSessions(),
    checkInvariants: () => store.checkInvariants(),
    close: () => store.close(),
  };
}
