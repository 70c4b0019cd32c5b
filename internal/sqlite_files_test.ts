// SQLite's files on disk: a database file's header (its string, and the 100 bytes in full),
// a rollback journal's magic at a header's offset.
import { strictEqual } from "node:assert/strict";
import {
  hasDatabaseHeader,
  hasJournalMagic,
  JOURNAL_MAGIC,
  startsWithDatabaseHeader,
} from "./sqlite_files.ts";

Deno.test("a database header: its string starts the file; in full, 100 bytes of it", () => {
  const header = new Uint8Array(100);
  header.set(new TextEncoder().encode("SQLite format 3\0"));
  strictEqual(startsWithDatabaseHeader(header), true);
  strictEqual(hasDatabaseHeader(header), true);
  strictEqual(startsWithDatabaseHeader(header.subarray(0, 16)), true);
  strictEqual(hasDatabaseHeader(header.subarray(0, 99)), false);
  strictEqual(startsWithDatabaseHeader(header.subarray(0, 15)), false);
  const other = header.slice();
  other[15] = 0x20;
  strictEqual(startsWithDatabaseHeader(other), false);
  strictEqual(hasDatabaseHeader(other), false);
  strictEqual(startsWithDatabaseHeader(new TextEncoder().encode('{"t":"session"}\n')), false);
});

Deno.test("a journal's magic at a header's offset, all 8 bytes", () => {
  const journal = new Uint8Array(1024);
  journal.set(JOURNAL_MAGIC, 512);
  strictEqual(hasJournalMagic(journal), false);
  strictEqual(hasJournalMagic(journal, 512), true);
  strictEqual(hasJournalMagic(journal.subarray(0, 519), 512), false);
});
