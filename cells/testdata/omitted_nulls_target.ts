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
import { respelled } from "./_wrapped.ts";
import { openStore as openReference } from "./unpointed_target.ts";

/** `value` without its `null` fields (each element's, for an array). */
function withoutNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutNulls);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(Object.entries(value).filter(([, field]) => field !== null));
}

/** `undefined` where the reference answers `null`. */
const leftOut = (answer: unknown) => answer ?? undefined;

/** Opens the store. */
export function openStore(path: string, options: StoreOptions): SessionDB {
  return respelled(openReference(path, options), {
    getSession: withoutNulls,
    listSessions: withoutNulls,
    markAttempting: leftOut,
    getHandoffState: leftOut,
  });
}
