/**
 * Mutant (legs): the journal-mode resolver ignores the requested mode and hard-codes
 * `PRAGMA journal_mode = WAL` (past the WAL-reset gate too). On the delete leg the file
 * ends up in WAL, so every cell must SKIP that leg (not honoured), never PASS it.
 *
 * @module
 */
import { SessionDB } from "../../../session_db/mod.ts";
import { setJournalMode } from "./_mutant.ts";
import type { StoreOptions } from "../../contract/target.ts";

/** Opens the mutant: WAL whatever `options.journalMode` says. */
export function openStore(path: string, _options: StoreOptions): SessionDB {
  setJournalMode(path, "WAL");
  // The reference store keeps a file that is already in WAL in WAL.
  return SessionDB.open(path, { journalMode: "wal" });
}

export { crashPoints } from "../../../session_db/mod.ts";
