// A store on libSQL (rowids as bigint), node:sqlite with readBigInts or better-sqlite3 with
// safe integers answers integers as bigints where the contract has numbers: the cells
// compare, sort and journal them as numbers, so each answer is read as numbers once, here.
import type { Store } from "./store.ts";

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

/** The store, its methods' answers (or what their promises resolve to) read as numbers. */
export function withNumberIds(store: Store): Store {
  const methods = new Map<PropertyKey, unknown>();
  return new Proxy(store, {
    get(target, key) {
      const member = Reflect.get(target, key, target);
      if (typeof member !== "function") return member;
      let method = methods.get(key);
      if (!method) {
        method = (...args: unknown[]) => {
          const answer = member.apply(target, args);
          return answer instanceof Promise ? answer.then(asNumbers) : asNumbers(answer);
        };
        methods.set(key, method);
      }
      return method;
    },
  });
}
