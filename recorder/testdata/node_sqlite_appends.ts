// A child for recorder_test.ts: five appends to a node:sqlite table in WAL mode at the
// given synchronous level, one acknowledgement line after each COMMIT returned.
import { DatabaseSync } from "node:sqlite";
const [path, synchronous, acks] = Deno.args;
const db = new DatabaseSync(path!);
db.exec(`PRAGMA journal_mode = wal; PRAGMA synchronous = ${synchronous}`);
db.exec("CREATE TABLE IF NOT EXISTS m (id INTEGER PRIMARY KEY, c TEXT)");
const journal = Deno.openSync(acks!, { create: true, append: true });
for (let i = 0; i < 5; i++) {
  db.exec("BEGIN IMMEDIATE");
  db.prepare("INSERT INTO m (c) VALUES (?)").run(`m${i}`);
  db.exec("COMMIT");
  journal.writeSync(new TextEncoder().encode(`${i}\n`));
}
db.close();
