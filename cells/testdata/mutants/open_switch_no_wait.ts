/**
 * Mutant (cell 6), as a store written elsewhere often opens: it switches the file to the
 * journal mode it wants itself, once, before the reference opens it, and lets SQLite's
 * busy through. A journal-mode switch's busy never goes to the busy handler, so a process
 * opening a new file whose write lock another process holds fails with a raw
 * SQLITE_BUSY. Once the file is in the mode, nothing differs from the reference.
 *
 * @module
 */
import {
  decideJournalMode,
  DEFAULT_JOURNAL_MODE,
  SessionDB,
  sqliteVersion,
} from "../../../session_db/mod.ts";
import { Database } from "../../../session_db/sqlite/mod.ts";
import type { StoreOptions } from "../../contract/target.ts";

/** Opens the mutant: the switch first, unguarded, then the reference store. */
export function openStore(path: string, options: StoreOptions): SessionDB {
  const raw = new Database(path);
  try {
    raw.setBusyTimeout(60_000);
    using pragma = raw.prepare("PRAGMA journal_mode");
    const onDisk = String(pragma.value<[string]>()?.[0]).toLowerCase();
    const requested = options.journalMode ?? DEFAULT_JOURNAL_MODE;
    const { mode } = decideJournalMode(requested, sqliteVersion(), onDisk);
    if (mode !== onDisk) raw.exec(`PRAGMA journal_mode = ${mode}`);
  } finally {
    raw.close();
  }
  return SessionDB.open(path, options.journalMode ? { journalMode: options.journalMode } : {});
}

export { crashPoints } from "../../../session_db/mod.ts";
