// Cell 6's contention: holds the write lock of the file (its own SQLite connection,
// BEGIN IMMEDIATE, no change) for a few ms of every period until the stop file appears,
// so that every role meets a busy lock during the run, not only when the scheduler
// happens to line them up. Once `<window>.request` appears it also holds the lock for one
// long window: it takes the lock as soon as it is free, writes `<window>.held` (the time),
// and keeps it until `<window>.release` appears, so that the cell can watch every role
// invoke an operation against a lock it cannot get.
import { exists, writeWhole } from "../../../internal/fs.ts";
import { awaitBarrier } from "../../../harness/barrier.ts";
import { TIMED_OUT } from "../../../harness/child.ts";
import { Database, SQLITE_BUSY, SqliteError } from "../../../session_db/sqlite/mod.ts";
import { CHILD_LIFETIME_MS, childArgs } from "../../contract/child_runtime.ts";
import { printReport } from "../../../internal/report_line.ts";

const [, dbPath, readyPath, stopPath, holdMs, periodMs, window] = childArgs(
  7,
  "lock_hog.ts <target> <db> <ready file> <stop file> <hold ms> <period ms> <window prefix>",
);
const db = new Database(dbPath!);
db.setBusyTimeout(5_000);
const pause = new Int32Array(new SharedArrayBuffer(4));
const end = performance.now() + CHILD_LIFETIME_MS;
let held = 0;
let windowHeld = false;

/**
 * Takes the write lock the instant it is free: SQLite's own busy handler sleeps up to
 * 100 ms between tries, and writers that keep the lock most of the time can starve it.
 */
function takeLockEagerly(): void {
  db.setBusyTimeout(0);
  try {
    for (;;) {
      if (performance.now() > end) Deno.exit(TIMED_OUT);
      try {
        db.exec("BEGIN IMMEDIATE");
        return;
      } catch (error) {
        if (!(error instanceof SqliteError) || (error.code & 0xff) !== SQLITE_BUSY) throw error;
        Atomics.wait(pause, 0, 0, 0.2);
      }
    }
  } finally {
    db.setBusyTimeout(5_000);
  }
}

Deno.writeTextFileSync(readyPath!, `${Deno.pid}\n`);
while (!exists(stopPath!)) {
  if (performance.now() > end) Deno.exit(TIMED_OUT);
  if (!windowHeld && exists(`${window}.request`)) {
    windowHeld = true;
    takeLockEagerly();
    writeWhole(`${window}.held`, `${Date.now()}\n`);
    if (!awaitBarrier(`${window}.release`, CHILD_LIFETIME_MS, 2)) Deno.exit(TIMED_OUT);
    const releasing = Date.now();
    db.exec("COMMIT");
    writeWhole(`${window}.released`, `${releasing}\n`);
    continue;
  }
  if (Number(holdMs) > 0) {
    db.exec("BEGIN IMMEDIATE");
    Atomics.wait(pause, 0, 0, Number(holdMs));
    db.exec("COMMIT");
    held++;
  }
  Atomics.wait(pause, 0, 0, Number(periodMs) - Number(holdMs));
}
db.close();
printReport({ held });
