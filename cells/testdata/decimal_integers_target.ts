/**
 * Test target: the reference store, correct, that spells every integer it answers in
 * decimal, as a worker whose JSON follows protobuf's mapping (an int64 is a string) or a
 * Postgres driver (a `bigint` column) does: message ids, counts, fences, attempts, pids,
 * wherever they are in an answer; and a session's `endedAt` too (a `numeric` column). The
 * cells must read each as its number.
 *
 * @module
 */
import type { SessionDB } from "../../session_db/mod.ts";
import type { StoreOptions } from "../contract/target.ts";
import { respelledAll } from "./_wrapped.ts";
import { openStore as openReference } from "./unpointed_target.ts";

/** `value` with every safe integer in it, however deep, and each `endedAt` in decimal. */
function decimal(value: unknown, field?: string): unknown {
  if (typeof value === "number" && (Number.isSafeInteger(value) || field === "endedAt")) {
    return String(value);
  }
  if (Array.isArray(value)) return value.map((element) => decimal(element));
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(Object.entries(value).map(([key, v]) => [key, decimal(v, key)]));
}

/** Opens the store. */
export function openStore(path: string, options: StoreOptions): SessionDB {
  return respelledAll(openReference(path, options), (answer) => decimal(answer));
}
