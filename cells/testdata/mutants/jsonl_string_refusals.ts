/**
 * Mutant (typed refusals): the JSON-lines store (`../jsonl_store/target.ts`) that throws
 * its refusals as strings (`throw "Cannot append …"`): a caller cannot tell one from
 * another, so an append to a missing session is not refused with a typed error (cell 13),
 * nor a full disk (F1). Not SQLite: the default leg only.
 *
 * @module
 */
import type { CellMessage, StoredMessage, StoredSession } from "../../contract/target.ts";
import { JsonlStore } from "../jsonl_store/jsonl_store.ts";

function asString<T>(run: () => T): T {
  try {
    return run();
  } catch (error) {
    throw error instanceof Error ? error.message : error;
  }
}

/** The JSON-lines store throwing strings. */
export class StringRefusalsStore {
  #store: JsonlStore;

  /** Wraps an open store. */
  constructor(store: JsonlStore) {
    this.#store = store;
  }

  /** Creates a session, keeping an existing one. */
  createSession(id: string): void {
    asString(() => this.#store.createSession(id));
  }

  /** Appends a message; its id once it is on disk. */
  appendMessage(sessionId: string, message: CellMessage): number {
    return asString(() => this.#store.appendMessage(sessionId, message));
  }

  /** The session's messages in id order. */
  getMessages(sessionId: string): StoredMessage[] {
    return asString(() => this.#store.getMessages(sessionId));
  }

  /** A session, or `undefined`. */
  getSession(id: string): StoredSession | undefined {
    return asString(() => this.#store.getSession(id));
  }

  /** Every session. */
  listSessions(): StoredSession[] {
    return asString(() => this.#store.listSessions());
  }

  /** Closes the store. */
  close(): void {
    this.#store.close();
  }
}

/** Opens the mutant. */
export function openStore(path: string): StringRefusalsStore {
  return new StringRefusalsStore(asString(() => JsonlStore.open(path)));
}
