/**
 * Test target: the JSON-lines store, correct, whose every method answers a thenable that is
 * not a native promise and runs its work only when awaited (as Drizzle's query builders
 * are, returned from a method that is not `async`). Through it the store answers its ids as
 * bigints, `null` for a session it lacks, and rejects with error classes that leave `name`
 * as `Error`: the cells must read all three as they read them from a native promise.
 *
 * @module
 */
import type { CellMessage, StoredMessage, StoredSession } from "../../contract/target.ts";
import { openStore as openUnnamedErrorsStore } from "./unnamed_errors_target.ts";

/** A query run when awaited, once: a thenable, not a `Promise`. */
export class Query<T> implements PromiseLike<T> {
  #run: () => T;
  #result?: Promise<T>;

  /** The query `run` answers. */
  constructor(run: () => T) {
    this.#run = run;
  }

  /** Runs the query (the first time) and passes its answer on. */
  then<A = T, B = never>(
    onFulfilled?: ((value: T) => A | PromiseLike<A>) | null,
    onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): PromiseLike<A | B> {
    this.#result ??= new Promise<T>((resolve) => resolve(this.#run()));
    return this.#result.then(onFulfilled, onRejected);
  }
}

/** A message as this store answers it: its id a bigint. */
export type BigintMessage = Omit<StoredMessage, "id"> & { id: bigint };

/** The store's methods, each answering a {@linkcode Query}. */
export interface ThenableStore {
  createSession(id: string): Query<void>;
  appendMessage(sessionId: string, message: CellMessage): Query<bigint>;
  getMessages(sessionId: string): Query<BigintMessage[]>;
  getSession(id: string): Query<StoredSession | null>;
  listSessions(): Query<StoredSession[]>;
  checkInvariants(): Query<string[]>;
  close(): Query<void>;
}

/** Opens the store. */
export function openStore(path: string): Query<ThenableStore> {
  return new Query(() => {
    const store = openUnnamedErrorsStore(path);
    return {
      createSession: (id) => new Query(() => store.createSession(id)),
      appendMessage: (sessionId, message) =>
        new Query(() => BigInt(store.appendMessage(sessionId, message))),
      getMessages: (sessionId) =>
        new Query(() => store.getMessages(sessionId).map((m) => ({ ...m, id: BigInt(m.id) }))),
      getSession: (id) => new Query(() => store.getSession(id) ?? null),
      listSessions: () => new Query(() => store.listSessions()),
      checkInvariants: () => new Query(() => store.checkInvariants()),
      close: () => new Query(() => store.close()),
    };
  });
}
