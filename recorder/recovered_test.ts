// RecoveredStates: a state is recovered away from the scratch folder (in memory where the
// machine has /dev/shm), the judge runs in the scratch folder on the recovered files (on
// the state's own when SQLite cannot recover it), and close() removes the memory folder.
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { Database } from "../session_db/sqlite/database.ts";
import { exists } from "../internal/fs.ts";
import { testFolder } from "../internal/_test_folder.ts";
import { Buffer } from "node:buffer";
import { readFolder, writeImage } from "./image.ts";
import { RecoveredStates, recoverSqliteFiles } from "./recovered.ts";
import { memoryFolder, removeOrphans } from "./_memory_folder.ts";

/** A store.db in WAL mode with one committed row still only in its -wal, as a crash leaves it. */
function walState(): Map<string, Uint8Array> {
  const dir = Deno.makeTempDirSync();
  const db = new Database(`${dir}/store.db`);
  db.exec("PRAGMA journal_mode = WAL");
  db.exec("PRAGMA wal_autocheckpoint = 0");
  db.exec("CREATE TABLE t (v TEXT)");
  db.exec("INSERT INTO t VALUES ('acknowledged')");
  const files = readFolder(dir);
  db.close();
  Deno.removeSync(dir, { recursive: true });
  return files;
}

/** Whether this process may use /dev/shm (Deno asks for every permission there). */
const memory = (() => {
  try {
    return Deno.build.os === "linux" && Deno.statSync("/dev/shm").isDirectory;
  } catch {
    return false;
  }
})();

function memoryFolders(): string[] {
  if (!memory) return [];
  return [...Deno.readDirSync("/dev/shm")]
    .map((entry) => entry.name)
    .filter((name) => name.startsWith(`session-cells-states-${Deno.pid}-`));
}

Deno.test("RecoveredStates: the judge reads the recovered files in the scratch folder", async () => {
  const scratch = `${testFolder()}/scratch`;
  const states = new RecoveredStates<string[]>(scratch);
  const state = walState();
  ok(state.has("store.db-wal"), "the state keeps its row in the WAL");
  const seen = await states.check({ files: state, key: "a" }, "", (dir) => {
    strictEqual(dir, scratch);
    const db = new Database(`${dir}/store.db`, { create: false });
    try {
      return [...Deno.readDirSync(dir)].map((e) => e.name).filter((n) => !n.endsWith("-shm"))
        .concat(String(db.prepare("SELECT v FROM t").value()));
    } finally {
      db.close();
    }
  });
  // Recovered: the WAL checkpointed into the file and gone; the acknowledged row is there.
  deepStrictEqual(seen, ["store.db", "acknowledged"]);
  const same = await states.check({ files: state, key: "b" }, "", () => ["judged again"]);
  deepStrictEqual(same, seen);
  strictEqual(states.judged, 1);
  strictEqual(memoryFolders().length, memory ? 1 : 0);
  states.close();
  deepStrictEqual(memoryFolders(), []);
});

Deno.test("RecoveredStates: a state SQLite cannot recover is judged as it is", async () => {
  const scratch = `${testFolder()}/scratch`;
  const states = new RecoveredStates<string>(scratch);
  const damaged = new Uint8Array(4096);
  damaged.set(new TextEncoder().encode("SQLite format 3\0"));
  damaged.fill(0xff, 16);
  const files = new Map([["store.db", damaged], ["notes.txt", new TextEncoder().encode("x")]]);
  const verdict = await states.check({ files, key: "d" }, "", (dir) => {
    deepStrictEqual(readFolder(dir), files);
    return "judged";
  });
  strictEqual(verdict, "judged");
  states.close();
});

Deno.test({
  name: "memoryFolder: folders of processes that are gone are removed, live ones kept",
  ignore: !memory,
}, () => {
  // A pid above the kernel's limit names no process; this process's is running.
  const gone = Deno.makeTempDirSync({ dir: "/dev/shm", prefix: "session-cells-states-99999999-" });
  const mine = memoryFolder();
  ok(mine?.startsWith(`/dev/shm/session-cells-states-${Deno.pid}-`));
  removeOrphans();
  strictEqual(exists(gone), false);
  strictEqual(exists(mine!), true);
  Deno.removeSync(mine!, { recursive: true });
});

Deno.test({
  name: "RecoveredStates: a memory folder that cannot be written hands over to the scratch folder",
  ignore: !memory,
}, async () => {
  const scratch = `${testFolder()}/scratch`;
  const states = new RecoveredStates<string>(scratch);
  const state = walState();
  await states.check({ files: state, key: "a" }, "", () => "first");
  const [mine] = memoryFolders();
  ok(mine, "the first state was recovered in memory");
  // Stands in for a full /dev/shm: the folder is now a file, so nothing can be written there.
  Deno.removeSync(`/dev/shm/${mine}`, { recursive: true });
  Deno.writeTextFileSync(`/dev/shm/${mine}`, "");
  const other = new Map(state);
  other.set("notes.txt", new TextEncoder().encode("another state"));
  const verdict = await states.check({ files: other, key: "b" }, "", (dir) => {
    strictEqual(dir, scratch);
    return [...Deno.readDirSync(dir)].map((e) => e.name).sort().join(",");
  });
  strictEqual(verdict, "notes.txt,store.db");
  strictEqual(exists(`/dev/shm/${mine}`), false);
  states.close();
});

Deno.test("RecoveredStates: states whose WALs differ only after the last frame recovery keeps are judged once", async () => {
  const scratch = `${testFolder()}/scratch`;
  const states = new RecoveredStates<string>(scratch);
  const state = walState();
  const wal = state.get("store.db-wal")!;
  const withTail = (tail: Uint8Array) => {
    const files = new Map(state);
    const longer = new Uint8Array(wal.length + tail.length);
    longer.set(wal);
    longer.set(tail, wal.length);
    files.set("store.db-wal", longer);
    return files;
  };
  // A torn frame after the last commit: zeros, then garbage; recovery reads neither.
  const torn = [withTail(new Uint8Array(700)), withTail(new Uint8Array(700).fill(0x5a))];
  let judged = 0;
  const judge = () => `judged ${++judged}`;
  for (const [i, files] of [state, ...torn].entries()) {
    strictEqual(await states.check({ files, key: `s${i}` }, "", judge), "judged 1");
  }
  strictEqual(states.recovered, 1, "one recovery for the three states");
  // A committed frame that differs (its checksum no longer matches) is another state.
  const flipped = new Map(state);
  const changed = wal.slice();
  changed[wal.length - 1]! ^= 1;
  flipped.set("store.db-wal", changed);
  strictEqual(await states.check({ files: flipped, key: "f" }, "", judge), "judged 2");
  // Another context (other acknowledgements) is never merged.
  strictEqual(await states.check({ files: torn[0]!, key: "t" }, "other", judge), "judged 3");
  states.close();
});

/**
 * A DELETE-mode store.db in the middle of a transaction that spilled to the file: the
 * database holds uncommitted pages and its journal is hot (synced, magic written). Also
 * the committed database alone, as it was before the transaction.
 */
function hotJournalState(): { hot: Map<string, Uint8Array>; committed: Uint8Array } {
  const dir = Deno.makeTempDirSync();
  const db = new Database(`${dir}/store.db`);
  try {
    db.exec("PRAGMA journal_mode = DELETE; PRAGMA cache_size = 2");
    db.exec("CREATE TABLE t (v TEXT)");
    db.exec(
      "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200) " +
        "INSERT INTO t SELECT printf('%0500d', i) FROM n",
    );
    const committed = Deno.readFileSync(`${dir}/store.db`);
    db.exec("BEGIN; UPDATE t SET v = upper(v) || 'x'");
    const hot = readFolder(dir);
    db.exec("ROLLBACK");
    return { hot, committed };
  } finally {
    db.close();
    Deno.removeSync(dir, { recursive: true });
  }
}

Deno.test("RecoveredStates: a state with a rollback journal is compared as the file its recovery leaves", async () => {
  const { hot, committed } = hotJournalState();
  const journal = hot.get("store.db-journal")!;
  const spilled = hot.get("store.db")!;
  ok(journal[0] !== 0, "the journal is hot");
  ok(Buffer.compare(spilled, committed) !== 0, "the transaction spilled into the file");
  const states = new RecoveredStates<string>(`${testFolder()}/scratch`);
  let judged = 0;
  const judge = () => `judged ${++judged}`;
  const check = (files: Map<string, Uint8Array>, key: string) =>
    states.check({ files, key }, "", judge);
  const withJournal = (db: Uint8Array, content: Uint8Array) =>
    new Map([["store.db", db], ["store.db-journal", content]]);
  // The spilled file alone, then with journals SQLite reads only the first byte of
  // (empty, or that byte 0 as a journal is until its records are synced): one recovery.
  strictEqual(await check(new Map([["store.db", spilled]]), "alone"), "judged 1");
  const cold = [new Uint8Array(0), journal.slice(), new Uint8Array(journal.length)];
  cold[1]![0] = 0;
  for (const [i, content] of cold.entries()) {
    strictEqual(await check(withJournal(spilled, content), `cold ${i}`), "judged 1");
  }
  strictEqual(states.recovered, 1);
  // The hot journal played back leaves the committed file, whatever the spill wrote: the
  // committed file beside it, and the committed file alone, are the same state.
  strictEqual(await check(hot, "hot"), "judged 2");
  strictEqual(await check(withJournal(committed, journal), "before the spill"), "judged 2");
  strictEqual(await check(new Map([["store.db", committed]]), "committed"), "judged 2");
  strictEqual(states.recovered, 2);
  // A first record whose checksum fails ends the playback before it: the spilled file as
  // it is, never the committed one.
  const broken = journal.slice();
  const sector = new DataView(broken.buffer).getUint32(20);
  broken[sector + 4 + 4096 - 200]! ^= 1;
  strictEqual(await check(withJournal(spilled, broken), "broken"), "judged 1");
  strictEqual(states.recovered, 2);
  states.close();
});

Deno.test("recoverSqliteFiles: SQLite leaves the database as it is beside a journal whose first byte is 0", () => {
  const { hot } = hotJournalState();
  const journal = hot.get("store.db-journal")!;
  const spilled = hot.get("store.db")!;
  // The hot journal cut anywhere, then its first byte zeroed: SQLite never reads further.
  for (const length of [1, 28, 512, 4096, journal.length >> 1, journal.length]) {
    const content = journal.slice(0, length);
    content[0] = 0;
    const dir = `${testFolder()}/state`;
    Deno.mkdirSync(dir, { recursive: true });
    const files = new Map([["store.db", spilled], ["store.db-journal", content]]);
    writeImage(files, dir);
    deepStrictEqual(recoverSqliteFiles(dir, files), []);
    deepStrictEqual(
      readFolder(dir),
      new Map([["store.db", spilled]]),
      `journal of ${length} bytes`,
    );
  }
});

Deno.test("recoverSqliteFiles: a hot journal is played back though the file's header says WAL", () => {
  // Page 1 written by a switch to WAL that the journal undoes: SQLite rolls the journal
  // back before it looks at the header, and so must the recovery.
  const { hot } = hotJournalState();
  const switched = hot.get("store.db")!.slice();
  switched[18] = switched[19] = 2;
  const files = new Map(hot).set("store.db", switched);
  const dir = `${testFolder()}/state`;
  Deno.mkdirSync(dir, { recursive: true });
  writeImage(files, dir);
  deepStrictEqual(recoverSqliteFiles(dir, files), []);
  const db = new Database(`${dir}/store.db`, { create: false });
  try {
    strictEqual(db.prepare("SELECT count(*) FROM t WHERE v LIKE '%x'").value()?.[0], 0);
  } finally {
    db.close();
  }
});
