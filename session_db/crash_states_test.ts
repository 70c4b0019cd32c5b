import { deepStrictEqual, ok, throws } from "node:assert/strict";
import { CrashModel, CrashModelError, type LogRecord, SECTOR_SIZE } from "./crash_states.ts";
import { decodeLog, encodeRecord, RecordKind, VfsLogError } from "./_vfs_log.ts";

const DIR = "/run/db";
const MAIN_DB = 0x100 | 0x4 | 0x2;
const JOURNAL = 0x800 | 0x4 | 0x2;
const bytes = (...values: number[]) => new Uint8Array(values);

/** A log builder: seq numbers in order. */
function log() {
  const records: LogRecord[] = [];
  const seq = () => records.length;
  const api = {
    records,
    open(file: number, name: string, flags = MAIN_DB) {
      records.push({ kind: "open", seq: seq(), file, path: `${DIR}/${name}`, flags });
      return api;
    },
    write(file: number, offset: number, data: Uint8Array) {
      records.push({ kind: "write", seq: seq(), file, offset, data });
      return api;
    },
    truncate(file: number, size: number) {
      records.push({ kind: "truncate", seq: seq(), file, size });
      return api;
    },
    sync(file: number) {
      records.push({ kind: "sync", seq: seq(), file, flags: 2 });
      return api;
    },
    delete(name: string, dirSync: boolean) {
      records.push({ kind: "delete", seq: seq(), path: `${DIR}/${name}`, dirSync });
      return api;
    },
    close(file: number) {
      records.push({ kind: "close", seq: seq(), file });
      return api;
    },
  };
  return api;
}

Deno.test("last-sync image: a file as of its last completed sync; the full image has everything", () => {
  const l = log().open(1, "s.db").write(1, 0, bytes(1, 2, 3)).sync(1).write(1, 1, bytes(9))
    .truncate(1, 2);
  const model = new CrashModel(new Map(), l.records, DIR);
  deepStrictEqual(model.lastSyncImage(), new Map([["s.db", bytes(1, 2, 3)]]));
  deepStrictEqual(model.fullImage(), new Map([["s.db", bytes(1, 9)]]));
  deepStrictEqual([model.syncs, model.operations], [1, 3]);
});

Deno.test("last-sync image: a file never synced exists only if it was in the baseline", () => {
  const l = log().open(1, "new.db").write(1, 0, bytes(1)).open(2, "old.db").write(2, 0, bytes(7));
  const model = new CrashModel(new Map([["old.db", bytes(5, 5)]]), l.records, DIR);
  deepStrictEqual(model.lastSyncImage(), new Map([["old.db", bytes(5, 5)]]));
  deepStrictEqual(model.fullImage(), new Map([["old.db", bytes(7, 5)], ["new.db", bytes(1)]]));
});

Deno.test("an unlink without a folder sync is not durable: the synced journal comes back", () => {
  const l = log().open(2, "s.db-journal", JOURNAL).write(2, 0, bytes(4, 4)).sync(2).close(2)
    .delete("s.db-journal", false);
  const model = new CrashModel(new Map(), l.records, DIR);
  deepStrictEqual(model.lastSyncImage(), new Map([["s.db-journal", bytes(4, 4)]]));
  deepStrictEqual(model.fullImage(), new Map());
  deepStrictEqual(model.pendingNames, ["s.db-journal"]);
});

Deno.test("an unlink with its folder sync is durable at once", () => {
  const l = log().open(2, "s.db-journal", JOURNAL).write(2, 0, bytes(4)).sync(2).close(2)
    .delete("s.db-journal", true);
  deepStrictEqual(new CrashModel(new Map(), l.records, DIR).lastSyncImage(), new Map());
});

Deno.test("re-creating and syncing the path makes the old unlink moot: the new file is there", () => {
  const l = log().open(2, "j", 0x800 | 0x2).write(2, 0, bytes(1)).sync(2).close(2)
    .delete("j", false).open(3, "j", 0x800 | 0x2).write(3, 0, bytes(2)).sync(3);
  deepStrictEqual(
    new CrashModel(new Map(), l.records, DIR).lastSyncImage(),
    new Map([["j", bytes(2)]]),
  );
});

Deno.test("the first sync of a created journal syncs the folder (os_unix.c UNIXFILE_DIRSYNC)", () => {
  const l = log().open(2, "old-journal", JOURNAL).write(2, 0, bytes(1)).sync(2).close(2)
    .delete("old-journal", false);
  const pending = new CrashModel(new Map(), l.records, DIR);
  deepStrictEqual([...pending.lastSyncImage().keys()], ["old-journal"]);
  l.open(3, "s.db-wal", 0x80000 | 0x4 | 0x2).write(3, 0, bytes(8)).sync(3);
  const synced = new CrashModel(new Map(), l.records, DIR);
  deepStrictEqual(synced.lastSyncImage(), new Map([["s.db-wal", bytes(8)]]));
  // A main database file's sync does not sync the folder.
  const db = log().open(2, "j", JOURNAL).write(2, 0, bytes(1)).sync(2).close(2).delete("j", false)
    .open(1, "s.db").write(1, 0, bytes(3)).sync(1);
  deepStrictEqual(
    [...new CrashModel(new Map(), db.records, DIR).lastSyncImage().keys()].sort(),
    ["j", "s.db"],
  );
});

Deno.test("random states: seeded, each between the last-sync image and everything", () => {
  const l = log().open(1, "s.db").write(1, 0, bytes(0, 0, 0, 0)).sync(1);
  for (let i = 0; i < 4; i++) l.write(1, i, bytes(i + 1));
  const model = new CrashModel(new Map(), l.records, DIR);
  deepStrictEqual(model.randomState(42), model.randomState(42));
  const seen = new Set<string>();
  for (let seed = 1; seed <= 200; seed++) {
    const state = model.randomState(seed).get("s.db")!;
    ok(state.length === 4 && state.every((b, i) => b === 0 || b === i + 1), String(state));
    seen.add(state.join());
  }
  ok(seen.has("0,0,0,0") && seen.has("1,2,3,4") && seen.size > 8, `${seen.size} distinct states`);
});

Deno.test("torn states: a write keeps or loses whole 512-byte sectors, aligned on the file", () => {
  const data = new Uint8Array(3 * SECTOR_SIZE).fill(7);
  const l = log().open(1, "s.db").write(1, 0, new Uint8Array(4 * SECTOR_SIZE)).sync(1)
    .write(1, 256, data); // spans sectors 0..3, partly 0 and 3
  const model = new CrashModel(new Map(), l.records, DIR);
  let torn = 0;
  for (let seed = 1; seed <= 100; seed++) {
    const state = model.randomState(seed, true).get("s.db")!;
    for (let s = 0; s < 4; s++) {
      const from = Math.max(s * SECTOR_SIZE, 256);
      const to = Math.min((s + 1) * SECTOR_SIZE, 256 + data.length);
      const part = state.subarray(from, to);
      ok(part.every((b) => b === part[0]), `sector ${s} split inside (seed ${seed})`);
    }
    const kept = [0, 1, 2, 3].map((s) => state[Math.max(s * SECTOR_SIZE, 256)]);
    if (kept.some((b) => b === 7) && kept.some((b) => b === 0)) torn++;
  }
  ok(torn > 0, "no write was ever torn");
});

Deno.test("states(): the last-sync image first, then full, subsets and torn ones", () => {
  const model = new CrashModel(new Map(), log().open(1, "s.db").records, DIR);
  deepStrictEqual(
    model.states({ subsets: 2, torn: 1, seed: 5 }).map((s) => [s.kind, s.seed]),
    [["last-sync", 0], ["full", 0], ["subset", 5], ["subset", 6], ["torn", 7]],
  );
});

Deno.test("the model refuses a log that touches another folder or an unopened file", () => {
  throws(
    () =>
      new CrashModel(
        new Map(),
        [{ kind: "open", seq: 0, file: 1, path: "/x/s.db", flags: 0 }],
        DIR,
      ),
    CrashModelError,
  );
  throws(
    () => new CrashModel(new Map(), [{ kind: "sync", seq: 0, file: 3, flags: 2 }], DIR),
    CrashModelError,
  );
});

Deno.test("the log reader drops a torn last record and refuses damage before it", () => {
  const records = [
    encodeRecord(RecordKind.open, 0, 1, MAIN_DB, 0, `${DIR}/s.db`),
    encodeRecord(RecordKind.write, 1, 1, 4096, 0, bytes(1, 2, 3)),
    encodeRecord(RecordKind.sync, 2, 1, 0, 2, new Uint8Array(0)),
  ];
  const whole = new Uint8Array(records.reduce((n, r) => n + r.length, 0));
  let at = 0;
  for (const r of records) whole.set(r, at), at += r.length;
  const read = decodeLog(whole);
  deepStrictEqual(read.records.map((r) => r.kind), ["open", "write", "sync"]);
  deepStrictEqual(read.records[1], {
    kind: "write",
    seq: 1,
    file: 1,
    offset: 4096,
    data: bytes(1, 2, 3),
  });
  for (const cut of [1, 20, 31]) {
    const torn = decodeLog(whole.subarray(0, whole.length - records[2]!.length + cut));
    ok(torn.records.length === 2 && torn.tornBytes === cut, `cut ${cut}`);
  }
  // Torn inside a write's payload: the header is whole, the bytes are not.
  const short = decodeLog(whole.subarray(0, records[0]!.length + 34));
  ok(short.records.length === 1 && short.tornBytes === 34);
  const damaged = whole.slice();
  const header = records[0]!.length + 9; // inside the write's header
  damaged[header] = damaged[header]! ^ 1;
  throws(() => decodeLog(damaged), VfsLogError);
});
