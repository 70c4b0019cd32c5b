// Child for the busy-deadline test: takes the write lock of a session database
// (BEGIN IMMEDIATE) in another process, writes `<ready>`, holds the lock until
// `<release>` appears (at most 20 s), then rolls back.
//
// Usage: deno run <perms> hold_store_lock.ts <db> <ready> <release>
import { exists } from "../../internal/fs.ts";
import { Database } from "../sqlite/database.ts";

const [dbPath, ready, release] = Deno.args;
if (!dbPath || !ready || !release) {
  console.error("usage: hold_store_lock.ts <db> <ready> <release>");
  Deno.exit(2);
}

const db = new Database(dbPath);
db.exec("BEGIN IMMEDIATE");
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
db.exec("ROLLBACK");
db.close();
