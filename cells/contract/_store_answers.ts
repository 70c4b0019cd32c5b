// How the cells read a store's answers, once, where the target is loaded, so that a store
// is judged on what it says, not on how its driver spells it: the values it answers as
// `_answer_readings.ts` reads them; any thenable as a promise; a not-found error where the
// contract's none is `undefined` as `undefined`; and anything else it throws as an error whose
// name tells a typed refusal: a class of the store's own that left `name` as `Error` (a common
// omission) by its class's name, a thrown string as untyped. In a scoped child, a permission
// Deno refused ends the child instead (`sandbox_refusal.ts`).
import type { Store } from "./store.ts";
import { NONE_IS_UNDEFINED, readerOf } from "./_answer_readings.ts";
import { GENERIC_ERRORS } from "./typed.ts";
import { endIfRefused } from "./sandbox_refusal.ts";
import { enterJudging, judgingTracked } from "../../internal/judging_beacon.ts";

const NOTHING = () => {};

/**
 * What a store threw, as the cells read it: an error of a class of the store's own whose
 * `name` is still a generic one (`class NotFoundError extends Error {}` leaves it `Error`)
 * named by its class; an object with a `name` as an error of that name; anything else that
 * is not an `Error` (a string, a number) as a generic `Error`, untyped: a caller cannot tell
 * one thrown string from another.
 */
export function asStoreError(thrown: unknown): Error {
  if (thrown instanceof Error) {
    const own = thrown.constructor?.name;
    if (GENERIC_ERRORS.has(thrown.name) && own && !GENERIC_ERRORS.has(own)) {
      Object.defineProperty(thrown, "name", { value: own, configurable: true, writable: true });
    }
    return thrown;
  }
  const fields = typeof thrown === "object" && thrown !== null
    ? thrown as { name?: unknown; message?: unknown }
    : {};
  if (typeof fields.name === "string" && fields.name) {
    const error = new Error(String(fields.message ?? ""), { cause: thrown });
    error.name = fields.name;
    return error;
  }
  const shown = typeof thrown === "string" ? JSON.stringify(thrown) : String(thrown);
  return new Error(`the store threw a ${typeof thrown}, not an error: ${shown}`, {
    cause: thrown,
  });
}

/** Whether `value` is a promise or any other thenable (`await` resolves both alike). */
export function isPromiseLike<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as { then?: unknown } | null)?.then === "function";
}

/**
 * Whether `error` (as {@linkcode asStoreError} reads it) says "not found": a name with
 * `NotFound` in it (`NotFoundError`, `SessionNotFoundError`, TypeORM's `EntityNotFoundError`,
 * Deno's `NotFound`) or Node's `ENOENT` code (a store of a file per session). Only read so
 * where the contract's none is `undefined`: it then means none, and can never stand for a
 * record that should be there (that record is judged missing).
 */
export function saysNotFound(error: Error): boolean {
  return /notfound/i.test(error.name) || (error as { code?: unknown }).code === "ENOENT";
}

/**
 * The store, its methods' answers (or what any thenable resolves to) read as
 * `_answer_readings.ts` reads them (numbers, booleans and each "none" as the contract writes
 * them), a not-found error where the none is `undefined` as that none, and anything else
 * they throw as {@linkcode asStoreError} reads it.
 */
export function readAnswers(store: Store, path: string): Store {
  const methods = new Map<PropertyKey, unknown>();
  // A call that never returns is named to whatever watches this process (its parent or a
  // thread of its own); nobody watches a store's own children, whose calls pay nothing.
  const watched = judgingTracked();
  return new Proxy(store, {
    get(target, key) {
      const member = Reflect.get(target, key, target);
      if (typeof member !== "function") return member;
      let method = methods.get(key);
      if (!method) {
        const read = readerOf(key);
        const notFoundIsNone = NONE_IS_UNDEFINED.has(key);
        // What a throw says: the contract's none when it is a not-found one where that exists,
        // else the error as the cells read it.
        const readThrown = (thrown: unknown): undefined => {
          endIfRefused(String(key), thrown);
          const error = asStoreError(thrown);
          if (notFoundIsNone && saysNotFound(error)) return undefined;
          throw error;
        };
        method = (...args: unknown[]) => {
          const leave = watched ? enterJudging(`${String(key)} on ${path}`, path) : NOTHING;
          let answer: unknown;
          try {
            answer = member.apply(target, args);
          } catch (error) {
            leave();
            return readThrown(error);
          }
          if (!isPromiseLike(answer)) {
            leave();
            return read(answer);
          }
          // A thenable that is not a native promise (a query builder's, as Drizzle's) is read
          // as what it resolves to, as a native one is.
          return Promise.resolve(answer).then((value) => {
            leave();
            return read(value);
          }, (error) => {
            leave();
            return readThrown(error);
          });
        };
        methods.set(key, method);
      }
      return method;
    },
  });
}
