// The JSON-lines store whose every error is thrown again as `rethrow` makes it: how the
// fixtures that throw errors of other shapes (classes that keep Error's name, strings) are
// made.
import type { CellMessage, StoredMessage, StoredSession } from "../../contract/target.ts";
import { JsonlStore } from "./jsonl_store.ts";

/** The JSON-lines store, its errors thrown as `rethrow` makes them. */
export class RethrowingStore {
  #store: JsonlStore;
  #rethrow: (error: unknown) => unknown;

  /** Opens the store at `path`. */
  constructor(path: string, rethrow: (error: unknown) => unknown) {
    this.#rethrow = rethrow;
    this.#store = this.#own(() => JsonlStore.open(path));
  }

  #own<T>(run: () => T): T {
    try {
      return run();
    } catch (error) {
      throw this.#rethrow(error);
    }
  }

  /** Creates a session, keeping an existing one. */
  createSession(id: string): void {
    this.#own(() => this.#store.createSession(id));
  }

  /** Appends a message; its id once it is on disk. */
  appendMessage(sessionId: string, message: CellMessage): number {
    return this.#own(() => this.#store.appendMessage(sessionId, message));
  }

  /** The session's messages in id order. */
  getMessages(sessionId: string): StoredMessage[] {
    return this.#own(() => this.#store.getMessages(sessionId));
  }

  /** A session, or `undefined`. */
  getSession(id: string): StoredSession | undefined {
    return this.#own(() => this.#store.getSession(id));
  }

  /** Every session. */
  listSessions(): StoredSession[] {
    return this.#own(() => this.#store.listSessions());
  }

  /** Broken invariants. */
  checkInvariants(): string[] {
    return this.#own(() => this.#store.checkInvariants());
  }

  /** Closes the store. */
  close(): void {
    this.#store.close();
  }
}
