/**
 * Test target: the reference store, correct, whose open takes a lock of its own and keeps it
 * 1.5 s (a schema check, a migration), waiting for it at most one second, the least busy
 * deadline the contract allows, and refusing the open with an error named `BusyDeadlineError`
 * after that; its writes take the lock only for their own work. A process of a cell, or a
 * judge reading beside them, opening while others open must take the refusal as one.
 *
 * @module
 */
import type { SessionDB } from "../../session_db/mod.ts";
import type { StoreOptions } from "../contract/target.ts";
import { openContending } from "./contending_target.ts";

/** Opens the store, keeping its lock 1.5 s. */
export function openStore(path: string, options: StoreOptions): Promise<SessionDB> {
  return openContending(path, options, { write: 0, openMs: 1_500 });
}
