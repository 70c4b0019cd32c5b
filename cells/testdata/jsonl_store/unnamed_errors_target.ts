/**
 * Test target: the JSON-lines store, correct, whose error classes leave `name` as `Error`
 * (`class StoreFullError extends Error {}`, a common omission): its refusals are still of
 * its own classes, and the cells must read them as typed.
 *
 * @module
 */
import type { CellMessage, StoredMessage, StoredSession } from "../../contract/target.ts";
import { JsonlStore } from "./jsonl_store.ts";

/** An append named a session the store does not hold. */
export class NoSuchSessionError extends Error {}

/** The file system failed a call. */
export class StoreIoError extends Error {}

/** The log is damaged. */
export class DamagedStoreError extends Error {}

/** Each error of the store as one of the classes above, its message kept. */
function renamed(error: unknown): unknown {
  if (!(error instanceof Error)) return error;
  const Class = error.name === "UnknownSessionError"
    ? NoSuchSessionError
    : error.name === "CorruptStoreError"
    ? DamagedStoreError
    : StoreIoError;
  return new Class(error.message, { cause: error });
}

function own<T>(run: () => T): T {
  try {
    return run();
  } catch (error) {
    throw renamed(error);
  }
}

/** The JSON-lines store behind error classes of its own. */
export class UnnamedErrorsStore {
  #store: JsonlStore;

  /** Wraps an open store. */
  constructor(store: JsonlStore) {
    this.#store = store;
  }

  /** Creates a session, keeping an existing one. */
  createSession(id: string): void {
    own(() => this.#store.createSession(id));
  }

  /** Appends a message; its id once it is on disk. */
  appendMessage(sessionId: string, message: CellMessage): number {
    return own(() => this.#store.appendMessage(sessionId, message));
  }

  /** The session's messages in id order. */
  getMessages(sessionId: string): StoredMessage[] {
    return own(() => this.#store.getMessages(sessionId));
  }

  /** A session, or `undefined`. */
  getSession(id: string): StoredSession | undefined {
    return own(() => this.#store.getSession(id));
  }

  /** Every session. */
  listSessions(): StoredSession[] {
    return own(() => this.#store.listSessions());
  }

  /** Broken invariants. */
  checkInvariants(): string[] {
    return own(() => this.#store.checkInvariants());
  }

  /** Closes the store. */
  close(): void {
    this.#store.close();
  }
}

/** Opens the store. */
export function openStore(path: string): UnnamedErrorsStore {
  return new UnnamedErrorsStore(own(() => JsonlStore.open(path)));
}
