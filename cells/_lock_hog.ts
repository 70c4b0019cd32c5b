// Cell 6's contention: holds the write lock of the file (its own SQLite connection,
// BEGIN IMMEDIATE, no change) for a few ms of every period until the stop file appears,
// so that every role meets a busy lock during the run, not only when the scheduler
// happens to line them up.
import { exists } from "../internal/fs.ts";
import { TIMED_OUT } from "../harness/child.ts";
import { Database } from "../session_db/sqlite/mod.ts";
import { CHILD_LIFETIME_MS, childArgs } from "./child_runtime.ts";

const [, dbPath, readyPath, stopPath, holdMs, periodMs] = childArgs(
  6,
  "_lock_hog.ts <target> <db> <ready file> <stop file> <hold ms> <period ms>",
);
const db = new Database(dbPath!);
db.setBusyTimeout(5_000);
const pause = new Int32Array(new SharedArrayBuffer(4));
const end = performance.now() + CHILD_LIFETIME_MS;
let held = 0;
Deno.writeTextFileSync(readyPath!, `${Deno.pid}\n`);
while (!exists(stopPath!)) {
  if (performance.now() > end) Deno.exit(TIMED_OUT);
  db.exec("BEGIN IMMEDIATE");
  Atomics.wait(pause, 0, 0, Number(holdMs));
  db.exec("COMMIT");
  held++;
  Atomics.wait(pause, 0, 0, Number(periodMs) - Number(holdMs));
}
db.close();
console.log(JSON.stringify({ held }));
