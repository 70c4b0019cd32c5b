/**
 * Test target: the reference store, correct, that serialises its processes with a lock
 * file of its own: its open and every call are made under an exclusive `flock` of
 * `<path>.lock` (Deno's `lockSync`), as a store that guards each operation with an
 * application lock does. No other process moves inside one of its operations, so the stop
 * series must stop it before that lock, not only before SQLite's.
 *
 * @module
 */
import type { SessionDB } from "../../session_db/mod.ts";
import type { StoreOptions } from "../contract/target.ts";
import { fileLock, serialised } from "./_wrapped.ts";

/** Opens the store, each of its calls under the lock file's exclusive lock. */
export function openStore(path: string, options: StoreOptions): SessionDB {
  return serialised(path, options, fileLock(`${path}.lock`));
}
