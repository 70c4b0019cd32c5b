// How the cells read a store's answers, once, where the target is loaded, so that a store
// is judged on what it says, not on how its driver spells it: integers answered as bigints
// (libSQL's rowids, node:sqlite's readBigInts, better-sqlite3's safe integers) as numbers,
// which the cells compare, sort and journal; `0` and `1` where the contract has a boolean (a
// message's `active` flag as SQLite stores it, a guarded write's rows changed) as `false` and
// `true`; each "none" as the contract writes it (`undefined` for a missing session, `null`
// elsewhere, a session's field left out as `null`); any thenable as a promise; and what it
// throws as an error whose name tells a typed refusal: a class of the store's own that left
// `name` as `Error` (a common omission) by its class's name, a thrown string as untyped. In a
// scoped child, a permission Deno refused ends the child instead (`sandbox_refusal.ts`).
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

/** Whether `value` is a promise or any other thenable (`await` resolves both alike). */
export function isPromiseLike<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as { then?: unknown } | null)?.then === "function";
}

/**
 * Messages with an `active` flag of `0` or `1` (how SQLite stores a boolean, and how a row
 * of `node:sqlite`, better-sqlite3 or libSQL hands it out) as `false` or `true`; anything
 * else unchanged (a copy only where a flag was an integer).
 */
export function flagsAsBooleans(messages: unknown): unknown {
  const integer = (row: unknown): row is Record<string, unknown> =>
    isPlain(row) && (row.active === 0 || row.active === 1);
  if (!Array.isArray(messages) || !messages.some(integer)) return messages;
  return messages.map((row: unknown) => integer(row) ? { ...row, active: row.active === 1 } : row);
}

/** The methods whose "none" is `undefined`: a store whose driver answers `null` means it too. */
const NONE_IS_UNDEFINED: ReadonlySet<PropertyKey> = new Set([
  "getSession",
  "getObligation",
  "findLiveCompressionChild",
]);

/** The methods whose "none" is `null`: a store that answers `undefined` (no row) means it too. */
const NONE_IS_NULL: ReadonlySet<PropertyKey> = new Set(["markAttempting", "getHandoffState"]);

/**
 * The methods whose answer is a boolean: a store that answers the rows its write changed
 * (`changes()` of `node:sqlite` or better-sqlite3, Python's `rowcount`) says `true` with `1`
 * and `false` with `0`.
 */
const BOOLEAN_ANSWERS: ReadonlySet<PropertyKey> = new Set([
  "requestHandoff",
  "claimHandoff",
  "completeHandoff",
  "failHandoff",
  "tryAcquireCompressionLock",
  "releaseCompressionLock",
  "markDelivered",
  "markFailed",
  "markUnknown",
  "endSession",
  "reopenSession",
  "refreshCompressionLock",
  "reopenOrphanedCompressionSession",
]);

/** `1` as `true` and `0` as `false` (after {@linkcode asNumbers}); anything else unchanged. */
function asBoolean(answer: unknown): unknown {
  return answer === 1 ? true : answer === 0 ? false : answer;
}

/** The methods that answer sessions, or one. */
const SESSIONS: ReadonlySet<PropertyKey> = new Set([
  "getSession",
  "listSessions",
  "findLiveCompressionChild",
  "listPendingHandoffs",
]);

/** A session's fields whose "none" is `null`. */
const SESSION_NONE_FIELDS = ["parentSessionId", "endedAt", "endReason", "handoffState"] as const;

/**
 * Sessions (an array of them, or one) with each field whose "none" is `null` that they
 * leave out (a store of plain objects, JSON that omits empty fields) as `null`; a copy only
 * where one was left out.
 */
export function sessionNones(sessions: unknown): unknown {
  if (Array.isArray(sessions)) {
    return sessions.some(leavesOut) ? sessions.map(sessionNones) : sessions;
  }
  if (!leavesOut(sessions)) return sessions;
  const filled: Record<string, unknown> = { ...sessions };
  for (const field of SESSION_NONE_FIELDS) filled[field] ??= null;
  return filled;
}

function leavesOut(session: unknown): session is Record<string, unknown> {
  return isPlain(session) && SESSION_NONE_FIELDS.some((field) => session[field] === undefined);
}

/** How the answers of the method `key` are read. */
function readerOf(key: PropertyKey): (answer: unknown) => unknown {
  if (key === "getMessages") return (answer) => flagsAsBooleans(asNumbers(answer));
  if (NONE_IS_NULL.has(key)) return (answer) => answer === undefined ? null : asNumbers(answer);
  if (BOOLEAN_ANSWERS.has(key)) return (answer) => asBoolean(asNumbers(answer));
  const undefinedNone = NONE_IS_UNDEFINED.has(key);
  if (!SESSIONS.has(key)) {
    return undefinedNone ? (answer) => answer === null ? undefined : asNumbers(answer) : asNumbers;
  }
  return (answer) => sessionNones(undefinedNone && answer === null ? undefined : asNumbers(answer));
}

/**
 * The store, its methods' answers (or what any thenable resolves to) read as numbers, each
 * "none" as the contract writes it (`undefined` or `null`) and SQLite's `0` and `1` where the
 * contract has a boolean as booleans, and what they throw as {@linkcode asStoreError} reads it.
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
