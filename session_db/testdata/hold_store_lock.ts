// Child for the busy-deadline tests: takes the write lock of a session database
// (BEGIN IMMEDIATE, or BEGIN EXCLUSIVE, which also locks readers out of a rollback
// journal) in another process, writes `<ready>`, holds the lock until `<release>` appears
// (at most 20 s), waits the milliseconds written in it if any (so that a test can block
// in a synchronous open meanwhile), then rolls back.
//
// Usage: deno run <perms> hold_store_lock.ts <db> <ready> <release> [exclusive]
import { exists } from "../../internal/fs.ts";
import { Database } from "../sqlite/database.ts";

const [dbPath, ready, release, kind = "immediate"] = Deno.args;
if (!dbPath || !ready || !release) {
  console.error("usage: hold_store_lock.ts <db> <ready> <release>");
  Deno.exit(2);
}

const db = new Database(dbPath);
db.exec(kind === "exclusive" ? "BEGIN EXCLUSIVE" : "BEGIN IMMEDIATE");
Deno.writeTextFileSync(`${ready}.tmp`, String(Deno.pid));
Deno.renameSync(`${ready}.tmp`, ready);
const deadline = Date.now() + 20_000;
while (!exists(release)) {
  if (Date.now() > deadline) {
    console.error(`hold_store_lock: no release file "${release}" within 20 s`);
    break;
  }
  await new Promise((resolve) => setTimeout(resolve, 5));
}
const lingerMs = exists(release) ? Number(Deno.readTextFileSync(release).trim() || 0) : 0;
if (lingerMs > 0) await new Promise((resolve) => setTimeout(resolve, lingerMs));
db.exec("ROLLBACK");
db.close();
