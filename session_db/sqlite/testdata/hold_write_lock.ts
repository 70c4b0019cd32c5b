// Child for the SQLITE_BUSY test: takes the write lock of `<db>` (BEGIN IMMEDIATE and
// an insert into table `t`), writes `<ready>`, then holds the lock until `<release>`
// appears (at most 20 s) and rolls back.
//
// Usage: deno run -A hold_write_lock.ts <db> <ready> [release]
import { exists } from "../../../internal/fs.ts";
import { Database } from "../database.ts";

const [dbPath, readyFile, releaseFile = `${readyFile}.release`] = Deno.args;
if (!dbPath || !readyFile) {
  console.error("usage: hold_write_lock.ts <db> <ready> [release]");
  Deno.exit(2);
}

const db = new Database(dbPath);
db.setBusyTimeout(5000);
db.exec("BEGIN IMMEDIATE");
db.exec("INSERT INTO t (v) VALUES ('held by child')");
Deno.writeTextFileSync(`${readyFile}.tmp`, String(Deno.pid));
Deno.renameSync(`${readyFile}.tmp`, readyFile);

const deadline = Date.now() + 20_000;
while (!exists(releaseFile)) {
  if (Date.now() > deadline) {
    db.exec("ROLLBACK");
    db.close();
    console.error(`hold_write_lock: no release file "${releaseFile}" within 20 s`);
    Deno.exit(3);
  }
  await new Promise((resolve) => setTimeout(resolve, 5));
}
db.exec("ROLLBACK");
db.close();
