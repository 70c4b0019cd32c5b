/**
 * Test target: the reference store, correct, that names the fields of every record it
 * answers as its columns are named (`parent_session_id`, `ended_at`, `delivery_fence`), as a
 * store that hands out its rows as the driver reads them does. The cells must read each
 * field as the contract names it.
 *
 * @module
 */
import type { SessionDB } from "../../session_db/mod.ts";
import type { StoreOptions } from "../contract/target.ts";
import { respelledAll } from "./_wrapped.ts";
import { openStore as openReference } from "./unpointed_target.ts";

const snake = (name: string) => name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);

/** `value` with the name of every field in it, however deep, in snake case. */
export function snakeCased(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(snakeCased);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(Object.entries(value).map(([key, v]) => [snake(key), snakeCased(v)]));
}

/** Opens the store. */
export function openStore(path: string, options: StoreOptions): SessionDB {
  return respelledAll(openReference(path, options), snakeCased);
}
