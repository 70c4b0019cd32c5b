/**
 * Test target, broken for cell 2: the store of `lockdir_serialised_target.ts`, but its
 * `requestHandoff` checks the handoff's state under one hold of its lock directory and
 * writes the request under another, with raw SQL that checks nothing. Another process can
 * request and claim the handoff between the two: the stop before the second take of the
 * lock lets it, and the stale request then overwrites a running claim.
 *
 * @module
 */
import type { SessionDB } from "../../session_db/mod.ts";
import type { StoreOptions } from "../contract/target.ts";
import { checkThenRequest, dirLock } from "./_wrapped.ts";
import { openStore as openSerialised } from "./lockdir_serialised_target.ts";

/** Opens the store; its requests check and write under two holds of the lock directory. */
export function openStore(path: string, options: StoreOptions): SessionDB {
  return checkThenRequest(openSerialised(path, options), path, dirLock(`${path}.lock`));
}
