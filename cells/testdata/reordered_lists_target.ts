/**
 * Test target: the reference store, correct, answering its lists in another order (newest
 * first, as a store that lists by `ORDER BY created_at DESC`, or a hash map's order): its
 * sessions, pending handoffs, obligations and a sweep's recovered obligations. The contract
 * orders only a session's messages (by id): the cells must pass it.
 *
 * @module
 */
import type { SessionDB } from "../../session_db/mod.ts";
import type { StoreOptions } from "../contract/target.ts";
import { type Method, wrapped } from "./_wrapped.ts";
import { openStore as openReference } from "./unpointed_target.ts";

/** The lists whose order the contract leaves to the store. */
const UNORDERED = new Set([
  "listSessions",
  "listPendingHandoffs",
  "listObligations",
  "sweepRecoverable",
]);

/** Opens the store. */
export function openStore(path: string, options: StoreOptions): SessionDB {
  return wrapped(
    openReference(path, options),
    (key, method: Method) =>
      typeof key === "string" && UNORDERED.has(key)
        ? (...args: unknown[]) => [...method(...args) as unknown[]].reverse()
        : method,
  );
}
