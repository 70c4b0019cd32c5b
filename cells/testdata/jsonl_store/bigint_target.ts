/**
 * Test target: the JSON-lines store, correct, answering its message ids as bigints (as a
 * store on libSQL, whose rowids are bigints, does). The cells read them as numbers.
 *
 * @module
 */
import type { CellMessage, StoredMessage, StoredSession } from "../../contract/target.ts";
import { JsonlStore } from "./jsonl_store.ts";

/** A message as this store answers it: its id a bigint. */
export type BigintMessage = Omit<StoredMessage, "id"> & { id: bigint };

/** The JSON-lines store with bigint ids. */
export class BigintIdStore {
  #store: JsonlStore;

  /** Wraps an open store. */
  constructor(store: JsonlStore) {
    this.#store = store;
  }

  /** Creates a session, keeping an existing one. */
  createSession(id: string): void {
    this.#store.createSession(id);
  }

  /** Appends a message; its id once it is on disk. */
  appendMessage(sessionId: string, message: CellMessage): bigint {
    return BigInt(this.#store.appendMessage(sessionId, message));
  }

  /** The session's messages in id order. */
  getMessages(sessionId: string): BigintMessage[] {
    return this.#store.getMessages(sessionId).map((m) => ({ ...m, id: BigInt(m.id) }));
  }

  /** A session, or `undefined`. */
  getSession(id: string): StoredSession | undefined {
    return this.#store.getSession(id);
  }

  /** Every session. */
  listSessions(): StoredSession[] {
    return this.#store.listSessions();
  }

  /** Broken invariants. */
  checkInvariants(): string[] {
    return this.#store.checkInvariants();
  }

  /** Closes the store. */
  close(): void {
    this.#store.close();
  }
}

/** Opens the store. */
export function openStore(path: string): BigintIdStore {
  return new BigintIdStore(JsonlStore.open(path));
}
