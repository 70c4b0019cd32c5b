/**
 * Test target: the reference store, correct, that says "none" by leaving a value out, as a
 * store of plain JavaScript objects or a worker whose JSON omits empty fields does: a
 * session's `null` fields are absent, and a refused `markAttempting`, a session with no
 * handoff (`getHandoffState`) answer `undefined`. The cells must read these as `null`.
 *
 * @module
 */
import type { SessionDB } from "../../session_db/mod.ts";
import type { StoreOptions } from "../contract/target.ts";
import { type Method, wrapped } from "./_wrapped.ts";
import { openStore as openReference } from "./unpointed_target.ts";

/** `value` without its `null` fields (each element's, for an array). */
function withoutNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutNulls);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(Object.entries(value).filter(([, field]) => field !== null));
}

const SESSIONS: ReadonlySet<string | symbol> = new Set(["getSession", "listSessions"]);
const NONE: ReadonlySet<string | symbol> = new Set(["markAttempting", "getHandoffState"]);

/** Opens the store. */
export function openStore(path: string, options: StoreOptions): SessionDB {
  const store = openReference(path, options);
  return wrapped(store, (key, method: Method) => {
    if (SESSIONS.has(key)) return (...args: unknown[]) => withoutNulls(method(...args));
    if (NONE.has(key)) return (...args: unknown[]) => method(...args) ?? undefined;
    return method;
  });
}
