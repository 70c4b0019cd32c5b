/**
 * Test target, correct: the reference store, which signals another process with
 * `Deno.kill` as it opens (`SIGCONT` to the process that started it, harmless), as a store
 * that checks a previous owner's liveness at open does. Undeclared, the leg probe is
 * refused at open: every cell is an ERROR naming the permission, never a FAIL.
 *
 * @module
 */
import { SessionDB } from "../../session_db/mod.ts";
import type { StoreOptions } from "../contract/target.ts";

/** Opens the store. */
export function openStore(path: string, options: StoreOptions): SessionDB {
  Deno.kill(Deno.ppid, "SIGCONT");
  return SessionDB.open(path, options.journalMode ? { journalMode: options.journalMode } : {});
}
