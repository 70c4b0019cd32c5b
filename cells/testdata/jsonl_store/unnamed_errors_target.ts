/**
 * Test target: the JSON-lines store, correct, whose error classes leave `name` as `Error`
 * (`class StoreIoError extends Error {}`, a common omission): its refusals are still of
 * its own classes, and the cells must read them as typed.
 *
 * @module
 */
import { RethrowingStore } from "./_rethrowing_store.ts";

/** An append named a session the store does not hold. */
export class NoSuchSessionError extends Error {}

/** The file system failed a call. */
export class StoreIoError extends Error {}

/** The log is damaged. */
export class DamagedStoreError extends Error {}

/** Each error of the store as one of the classes above, its message kept. */
function ofOwnClass(error: unknown): unknown {
  if (!(error instanceof Error)) return error;
  const Class = error.name === "UnknownSessionError"
    ? NoSuchSessionError
    : error.name === "CorruptStoreError"
    ? DamagedStoreError
    : StoreIoError;
  return new Class(error.message, { cause: error });
}

/** Opens the store. */
export function openStore(path: string): RethrowingStore {
  return new RethrowingStore(path, ofOwnClass);
}
