// Cell 6's open window, the holder: makes a new SQLite file in the journal mode the store
// does not use, takes its write lock (BEGIN IMMEDIATE, no change), says so, and keeps it
// until released; then commits and closes, so that a store leaving WAL may. It stands for
// another process of the store caught making the same new file.
import { awaitBarrier } from "../../../harness/barrier.ts";
import { TIMED_OUT } from "../../../harness/child.ts";
import { writeWhole } from "../../../internal/fs.ts";
import { Database } from "../../../session_db/sqlite/mod.ts";
import { CHILD_LIFETIME_MS, childArgs } from "../../contract/child_runtime.ts";

const [, dbPath, mode, heldPath, releasePath] = childArgs(
  5,
  "open_holder.ts <target> <db> <wal|delete> <held file> <release file>",
);
const db = new Database(dbPath!);
db.setBusyTimeout(5_000);
// DELETE is a new file's mode already: nothing is written before the lock.
if (mode === "wal") {
  using pragma = db.prepare("PRAGMA journal_mode = WAL");
  const got = String(pragma.value<[string]>()?.[0]).toLowerCase();
  if (got !== "wal") {
    console.error(`open holder: journal mode wal was requested but SQLite kept ${got}`);
    Deno.exit(1);
  }
}
db.exec("BEGIN IMMEDIATE");
writeWhole(heldPath!, `${Date.now()}\n`);
if (!awaitBarrier(releasePath!, CHILD_LIFETIME_MS, 2)) Deno.exit(TIMED_OUT);
db.exec("COMMIT");
db.close();
