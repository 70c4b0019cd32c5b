// How the cells read a store's answers, once, where the target is loaded: integers a store
// answers as bigints (libSQL's rowids, node:sqlite's readBigInts, better-sqlite3's safe
// integers) as numbers, which the cells compare, sort and journal; a `null` where the
// contract's "none" is `undefined` (a missing session) as `undefined`; and what it throws as an
// error whose name tells a typed refusal: a class of the store's own that left `name` as
// `Error` (a common omission) by its class's name, a thrown string as untyped. In a scoped
// child, a permission Deno refused ends the child instead (`sandbox_refusal.ts`).
import type { Store } from "./store.ts";
import { GENERIC_ERRORS } from "./typed.ts";
import { endIfRefused } from "./sandbox_refusal.ts";
import { enterJudging, judgingTracked } from "../../internal/judging_beacon.ts";

const NOTHING = () => {};

/** Whether `value` holds a bigint (in arrays and plain objects, however deep). */
function holdsBigint(value: unknown): boolean {
  if (typeof value === "bigint") return true;
  if (Array.isArray(value)) return value.some(holdsBigint);
  if (isPlain(value)) return Object.values(value).some(holdsBigint);
  return false;
}

function isPlain(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== "object") return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/** `value` with each safe-integer bigint as a number (a copy only where one was found). */
export function asNumbers(value: unknown): unknown {
  if (!holdsBigint(value)) return value;
  if (typeof value === "bigint") {
    return value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER)
      ? Number(value)
      : value;
  }
  if (Array.isArray(value)) return value.map(asNumbers);
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>).map(([key, v]) => [key, asNumbers(v)]),
  );
}

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

/** The methods whose "none" is `undefined`: a store whose driver answers `null` means it too. */
const NONE_IS_UNDEFINED: ReadonlySet<PropertyKey> = new Set([
  "getSession",
  "getObligation",
  "findLiveCompressionChild",
]);

/**
 * The store, its methods' answers (or what their promises resolve to) read as numbers (and
 * a `null` "none" as `undefined`), and what they throw as {@linkcode asStoreError} reads it.
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
        const read = NONE_IS_UNDEFINED.has(key)
          ? (answer: unknown) => answer === null ? undefined : asNumbers(answer)
          : asNumbers;
        method = (...args: unknown[]) => {
          const leave = watched ? enterJudging(`${String(key)} on ${path}`, path) : NOTHING;
          let answer: unknown;
          try {
            answer = member.apply(target, args);
          } catch (error) {
            leave();
            endIfRefused(String(key), error);
            throw asStoreError(error);
          }
          if (!(answer instanceof Promise)) {
            leave();
            return read(answer);
          }
          return answer.then((value) => {
            leave();
            return read(value);
          }, (error) => {
            leave();
            endIfRefused(String(key), error);
            return Promise.reject(asStoreError(error));
          });
        };
        methods.set(key, method);
      }
      return method;
    },
  });
}
