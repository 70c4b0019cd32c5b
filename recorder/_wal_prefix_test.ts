// walKept against SQLite itself: for WAL files cut, torn, flipped and re-salted the way a
// power loss leaves them, the frames walKept says recovery keeps are the frames SQLite's
// recovery keeps (its checkpoint's log count), and two files that agree up to walKept's
// end recover to the same database.
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { Database } from "../session_db/sqlite/database.ts";
import { seededRandom } from "../harness/seeded_random.ts";
import { testFolder } from "../internal/_test_folder.ts";
import { walKept } from "./_wal_prefix.ts";

/** A database in WAL mode and its WAL holding `commits` transactions, none checkpointed. */
function walFiles(dir: string, commits: number): { db: Uint8Array; wal: Uint8Array } {
  const db = new Database(`${dir}/source.db`);
  db.exec("PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0");
  db.exec("CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)");
  for (let i = 0; i < commits; i++) {
    // Some transactions span several pages, so that not every frame is a commit frame.
    db.exec(`BEGIN; INSERT INTO t (v) VALUES ('${"x".repeat(i % 3 === 0 ? 6000 : 40)}'); COMMIT`);
  }
  const files = {
    db: Deno.readFileSync(`${dir}/source.db`),
    wal: Deno.readFileSync(`${dir}/source.db-wal`),
  };
  db.close();
  return files;
}

/** SQLite's recovery of `db` with `wal`: the frames it kept and the recovered file. */
function recover(dir: string, files: { db: Uint8Array; wal: Uint8Array }) {
  Deno.writeFileSync(`${dir}/state.db`, files.db);
  Deno.writeFileSync(`${dir}/state.db-wal`, files.wal);
  let frames: number;
  const db = new Database(`${dir}/state.db`, { create: false });
  try {
    db.exec("PRAGMA locking_mode = EXCLUSIVE; SELECT count(*) FROM sqlite_master");
    frames = Number(db.prepare("PRAGMA wal_checkpoint").value()![1]);
    db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  } finally {
    db.close();
  }
  const recovered = Deno.readFileSync(`${dir}/state.db`);
  for (const name of ["state.db", "state.db-wal", "state.db-shm"]) {
    try {
      Deno.removeSync(`${dir}/${name}`);
    } catch { /* not made */ }
  }
  return { frames, recovered };
}

/** The ways a power loss or a torn write leaves a WAL, each a copy. */
function variants(wal: Uint8Array, pageSize: number): Uint8Array[] {
  const random = seededRandom(7);
  const frame = 24 + pageSize;
  const frames = Math.floor((wal.length - 32) / frame);
  const out: Uint8Array[] = [];
  // Cut at every sector boundary and one byte before each frame's end.
  for (let end = 0; end <= wal.length; end += 512) out.push(wal.slice(0, end));
  for (let f = 1; f <= frames; f++) out.push(wal.slice(0, 32 + f * frame - 1));
  // A byte flipped in each frame's header fields and page, and in the WAL header.
  for (let f = 0; f < frames; f++) {
    const at = 32 + f * frame;
    for (const offset of [0, 4, 8, 12, 16, 20, 24 + Math.floor(random() * pageSize)]) {
      const copy = wal.slice();
      copy[at + offset]! ^= 0x40;
      out.push(copy);
    }
  }
  for (const offset of [0, 4, 8, 12, 16, 24, 31]) {
    const copy = wal.slice();
    copy[offset]! ^= 0x01;
    out.push(copy);
  }
  // A sector zeroed, and a sector of garbage, somewhere in a frame.
  for (let f = 0; f < frames; f++) {
    const at = 32 + f * frame + 512 * Math.floor(random() * (frame / 512));
    const zeroed = wal.slice();
    zeroed.fill(0, at, Math.min(at + 512, wal.length));
    out.push(zeroed);
    const garbage = wal.slice();
    for (let i = at; i < Math.min(at + 512, wal.length); i++) garbage[i] = random() * 256;
    out.push(garbage);
  }
  return out;
}

Deno.test("walKept keeps the frames SQLite's recovery keeps, for cut, torn and flipped WALs", () => {
  const dir = testFolder();
  const files = walFiles(dir, 9);
  const pageSize = new DataView(files.wal.buffer).getUint32(8);
  const all = walKept(files.wal);
  ok(all && all.frames > 9, `every frame kept: ${JSON.stringify(all)}`);
  let judged = 0;
  for (const wal of variants(files.wal, pageSize)) {
    const kept = walKept(wal);
    // The same bytes at an offset no 32-bit view can take are read the same.
    const shifted = new Uint8Array(wal.length + 1).subarray(1);
    shifted.set(wal);
    deepStrictEqual(walKept(shifted), kept);
    const sqlite = recover(dir, { db: files.db, wal });
    // A header SQLite does not read frames from leaves the WAL unused.
    strictEqual(kept?.frames ?? 0, sqlite.frames, `WAL of ${wal.length} bytes`);
    judged++;
  }
  ok(judged > 100, `${judged} variants`);
  Deno.removeSync(dir, { recursive: true });
});

Deno.test("walKept: two WALs that agree up to its end recover to the same database", () => {
  const dir = testFolder();
  const files = walFiles(dir, 6);
  const pageSize = new DataView(files.wal.buffer).getUint32(8);
  for (const wal of variants(files.wal, pageSize)) {
    const kept = walKept(wal);
    if (!kept) continue;
    const trimmed = wal.slice(0, kept.end);
    deepStrictEqual(walKept(trimmed), kept);
    deepStrictEqual(
      recover(dir, { db: files.db, wal: trimmed }),
      recover(dir, { db: files.db, wal }),
    );
  }
  Deno.removeSync(dir, { recursive: true });
});
