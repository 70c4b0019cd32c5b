// rolledBack against SQLite itself: for hot rollback journals cut, torn and flipped the way
// a power loss leaves them, beside database files cut, grown and torn, the file rolledBack
// predicts is the file SQLite's recovery leaves.
import { ok, strictEqual } from "node:assert/strict";
import { Buffer } from "node:buffer";
import { Database } from "../session_db/sqlite/database.ts";
import { seededRandom } from "../harness/seeded_random.ts";
import { testFolder } from "../internal/_test_folder.ts";
import { readFolder, writeImage } from "./image.ts";
import { recoverSqliteFiles } from "./recovered.ts";
import { rolledBack } from "./_journal_playback.ts";
import { hasJournalMagic, JOURNAL_MAGIC } from "../internal/sqlite_files.ts";

interface Scenario {
  pageSize: number;
  synchronous: "OFF" | "FULL";
  /** The statements of the transaction caught before its commit. */
  transaction: string;
  /** Its records rewritten under one header, as a commit writes them. */
  oneSegment?: boolean;
}

const SCENARIOS: Record<string, Scenario> = {
  "an update spilled to the file": {
    pageSize: 4096,
    synchronous: "FULL",
    transaction: "UPDATE t SET v = upper(v) || 'x'",
  },
  "a commit's journal: one segment": {
    pageSize: 4096,
    synchronous: "FULL",
    transaction: "UPDATE t SET v = upper(v) || 'x'",
    oneSegment: true,
  },
  "updates and inserts that grew the file": {
    pageSize: 1024,
    synchronous: "FULL",
    transaction:
      "UPDATE t SET v = v || 'q' WHERE rowid % 2 = 0; INSERT INTO t SELECT v || 'y' FROM t",
  },
  "a writer with syncs off (record count unknown)": {
    pageSize: 4096,
    synchronous: "OFF",
    transaction: "DELETE FROM t WHERE rowid % 3 = 0; UPDATE t SET v = 'z'",
  },
};

/** A database and its hot journal, caught inside `scenario`'s transaction. */
function hotState(dir: string, scenario: Scenario): { db: Uint8Array; journal: Uint8Array } {
  const db = new Database(`${dir}/source.db`);
  try {
    db.exec(`PRAGMA page_size = ${scenario.pageSize}; PRAGMA journal_mode = DELETE`);
    db.exec(`PRAGMA synchronous = ${scenario.synchronous}; PRAGMA cache_size = 2`);
    db.exec("CREATE TABLE t (v TEXT)");
    db.exec(
      "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 120) " +
        "INSERT INTO t SELECT printf('%0300d', i) FROM n",
    );
    db.exec(`BEGIN; ${scenario.transaction}`);
    const files = readFolder(dir);
    db.exec("ROLLBACK");
    return { db: files.get("source.db")!, journal: files.get("source.db-journal")! };
  } finally {
    db.close();
    Deno.removeSync(`${dir}/source.db`);
  }
}

/** Where each record of `journal` starts, segment after segment, as its headers say. */
function recordOffsets(journal: Uint8Array, pageSize: number): number[] {
  const view = new DataView(journal.buffer, journal.byteOffset, journal.byteLength);
  const sector = view.getUint32(20);
  const offsets: number[] = [];
  for (let at = 0; at + sector <= journal.length && hasJournalMagic(journal, at);) {
    let count = view.getUint32(at + 8);
    at += sector;
    if (count === 0xffffffff) count = Math.floor((journal.length - at) / (pageSize + 8));
    for (let r = 0; r < count && at + pageSize + 8 <= journal.length; r++) {
      offsets.push(at);
      at += pageSize + 8;
    }
    at = Math.ceil(at / sector) * sector;
  }
  return offsets;
}

/**
 * The records of a journal of several segments (one per cache spill) in one segment under
 * the first header, checksums recomputed: a journal as a commit writes it.
 */
function oneSegment(journal: Uint8Array, pageSize: number): Uint8Array {
  const view = new DataView(journal.buffer, journal.byteOffset, journal.byteLength);
  const sector = view.getUint32(20);
  const init = view.getUint32(12);
  const offsets = recordOffsets(journal, pageSize);
  const out = new Uint8Array(sector + offsets.length * (pageSize + 8));
  const outView = new DataView(out.buffer);
  out.set(journal.subarray(0, sector));
  outView.setUint32(8, offsets.length);
  offsets.forEach((from, r) => {
    const at = sector + r * (pageSize + 8);
    out.set(journal.subarray(from, from + 4 + pageSize), at);
    let sum = init;
    for (let i = pageSize - 200; i > 0; i -= 200) sum = (sum + out[at + 4 + i]!) >>> 0;
    outView.setUint32(at + 4 + pageSize, sum);
  });
  return out;
}

/** The ways a power loss or a torn write leaves a journal, each a copy. */
function journalVariants(journal: Uint8Array, pageSize: number): Uint8Array[] {
  const random = seededRandom(11);
  const record = pageSize + 8;
  const offsets = recordOffsets(journal, pageSize);
  const out = [journal];
  for (let end = 1; end < Math.min(journal.length, 2048); end += 511) {
    out.push(journal.slice(0, end));
  }
  for (const at of [...offsets, journal.length]) {
    for (const cut of [at - 1, at + 4, at + record - 1]) out.push(journal.slice(0, cut));
  }
  // Each header field flipped; record counts of 0, 1 and one past the records.
  for (const offset of [1, 8, 11, 12, 15, 16, 19, 20, 23, 24, 27]) {
    const copy = journal.slice();
    copy[offset]! ^= 0x01;
    out.push(copy);
  }
  for (const count of [0, 1, offsets.length + 1, 0xffffffff]) {
    const copy = journal.slice();
    new DataView(copy.buffer).setUint32(8, count);
    out.push(copy);
  }
  // Other valid sector sizes: the records and later headers are looked for elsewhere.
  for (const sectorSize of [32, 1024, 4096]) {
    const copy = journal.slice();
    new DataView(copy.buffer).setUint32(20, sectorSize);
    out.push(copy);
  }
  // In each record: its page number, a byte the checksum reads, one it skips, the checksum;
  // a sector zeroed and a sector of garbage.
  for (const at of offsets) {
    for (const offset of [3, 4 + pageSize - 200, 4 + pageSize - 199, record - 1]) {
      const copy = journal.slice();
      copy[at + offset]! ^= 0x40;
      out.push(copy);
    }
    const sector = at + 512 * Math.floor(random() * (record / 512));
    const zeroed = journal.slice();
    zeroed.fill(0, sector, Math.min(sector + 512, journal.length));
    out.push(zeroed);
    const garbage = journal.slice();
    for (let i = sector; i < Math.min(sector + 512, journal.length); i++) {
      garbage[i] = random() * 256;
    }
    out.push(garbage);
  }
  return out;
}

/** The database file cut short, grown by garbage, and torn inside a page. */
function databaseVariants(db: Uint8Array, pageSize: number): Uint8Array[] {
  const random = seededRandom(13);
  const grown = new Uint8Array(db.length + 3 * pageSize + 100);
  grown.set(db);
  for (let i = db.length; i < grown.length; i++) grown[i] = random() * 256;
  const torn = db.slice();
  const at = pageSize * Math.floor(db.length / pageSize / 2) + 512;
  for (let i = at; i < at + 512; i++) torn[i] = random() * 256;
  return [
    db,
    db.slice(0, db.length - pageSize / 2),
    db.slice(0, Math.max(pageSize, db.length - 5 * pageSize)),
    db.slice(0, pageSize),
    grown,
    torn,
  ];
}

/** The database file SQLite's recovery leaves (whether or not it then reads it). */
function recovered(dir: string, db: Uint8Array, journal: Uint8Array): Uint8Array {
  const files = new Map([["state.db", db], ["state.db-journal", journal]]);
  writeImage(files, dir);
  recoverSqliteFiles(dir, files);
  const file = Deno.readFileSync(`${dir}/state.db`);
  for (const entry of Deno.readDirSync(dir)) Deno.removeSync(`${dir}/${entry.name}`);
  return file;
}

for (const [name, scenario] of Object.entries(SCENARIOS)) {
  Deno.test(`rolledBack leaves the file SQLite's playback leaves: ${name}`, () => {
    const dir = testFolder();
    const state = hotState(dir, scenario);
    const db = state.db;
    const journal = scenario.oneSegment
      ? oneSegment(state.journal, scenario.pageSize)
      : state.journal;
    ok(journal[0] !== 0, "the journal is hot");
    const states = `${dir}/states`;
    Deno.mkdirSync(states);
    let compared = 0;
    for (const file of databaseVariants(db, scenario.pageSize)) {
      const journals = file === db ? journalVariants(journal, scenario.pageSize) : [journal];
      for (const content of journals) {
        if (content[0] === 0) continue;
        const predicted = rolledBack(file, content);
        if (predicted === undefined) continue;
        const sqlite = recovered(states, file, content);
        strictEqual(
          Buffer.compare(predicted, sqlite),
          0,
          `a database of ${file.length} bytes, a journal of ${content.length} bytes: ` +
            `predicted ${predicted.length} bytes, SQLite left ${sqlite.length}`,
        );
        compared++;
      }
    }
    ok(compared > 100, `${compared} states compared`);
    Deno.removeSync(dir, { recursive: true });
  });
}

Deno.test("rolledBack: a journal ending in a super-journal name is not modelled", () => {
  const dir = testFolder();
  const { db, journal } = hotState(dir, SCENARIOS["an update spilled to the file"]!);
  const named = new Uint8Array(journal.length + 24);
  named.set(journal);
  named.set(JOURNAL_MAGIC, named.length - 8);
  strictEqual(rolledBack(db, named), undefined);
  Deno.removeSync(dir, { recursive: true });
});
