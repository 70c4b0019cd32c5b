// Cell 6's long-lived reader: holds one read transaction open on the file (through its
// own SQLite connection, whatever the store) until the stop file appears, pinning WAL
// checkpoints the way a forgotten reader does.
import { awaitBarrier } from "../../../harness/barrier.ts";
import { TIMED_OUT } from "../../../harness/child.ts";
import { Database } from "../../../session_db/sqlite/mod.ts";
import { CHILD_LIFETIME_MS, childArgs } from "../../contract/child_runtime.ts";

const [, dbPath, readyPath, stopPath] = childArgs(
  4,
  "long_reader.ts <target> <db> <ready file> <stop file>",
);
const db = new Database(dbPath!, { readonly: true });
db.setBusyTimeout(5_000);
db.exec("BEGIN");
// The first read takes the snapshot the transaction keeps until it ends.
using count = db.prepare("SELECT count(*) FROM sqlite_master");
count.value();
Deno.writeTextFileSync(readyPath!, `${Deno.pid}\n`);
if (!awaitBarrier(stopPath!, CHILD_LIFETIME_MS, 20)) Deno.exit(TIMED_OUT);
db.exec("COMMIT");
db.close();
