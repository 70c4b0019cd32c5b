import { ok, strictEqual, throws } from "node:assert/strict";
import { Database } from "../session_db/sqlite/database.ts";
import { currentLeg, LegError, legVerdict, observeJournalMode, parseLeg } from "./legs.ts";
import { tempDir } from "../session_db/_test_helpers.ts";

/** A database `s.db` in `dir`, in DELETE mode with one table, left open. */
function deleteModeDb(dir: string): { path: string; db: Database } {
  const path = `${dir}/s.db`;
  const db = new Database(path);
  db.exec("PRAGMA journal_mode = delete; CREATE TABLE t (x)");
  return { path, db };
}

Deno.test("parseLeg accepts the three legs and rejects anything else with the fix", () => {
  strictEqual(parseLeg(undefined), "default");
  strictEqual(parseLeg(""), "default");
  strictEqual(parseLeg("WAL"), "wal");
  strictEqual(parseLeg("delete"), "delete");
  throws(
    () => parseLeg("truncate"),
    (e: unknown) => e instanceof LegError && /use one of default, delete, wal/.test(e.message),
  );
});

Deno.test("observeJournalMode tells WAL, DELETE, TRUNCATE and PERSIST apart from what SQLite leaves", () => {
  using tmp = tempDir();
  const dir = tmp.path;
  const at = (mode: string) => {
    const path = `${dir}/${mode}.db`;
    const db = new Database(path);
    db.exec(`PRAGMA journal_mode = ${mode}`);
    db.exec("CREATE TABLE t (x); INSERT INTO t VALUES (1)");
    // Observed while the connection is still open, as at a kill.
    const seen = observeJournalMode(path, mode, true).mode;
    db.close();
    return seen;
  };
  strictEqual(at("delete"), "delete");
  strictEqual(at("truncate"), "truncate");
  strictEqual(at("persist"), "persist");
  strictEqual(at("wal"), "wal");
  // MEMORY and OFF leave no journal: on disk they read as DELETE.
  strictEqual(at("memory"), "delete");
  Deno.writeTextFileSync(`${dir}/log.jsonl`, '{"a":1}\n');
  strictEqual(observeJournalMode(`${dir}/log.jsonl`, "x").mode, "not-sqlite");
  strictEqual(observeJournalMode(`${dir}/nothing.db`, "x").mode, "missing");
});

Deno.test("mid-operation, an empty or unsynced journal is any rollback mode's, not TRUNCATE or PERSIST", () => {
  using tmp = tempDir();
  const { path, db } = deleteModeDb(tmp.path);
  db.close();
  Deno.writeFileSync(`${path}-journal`, new Uint8Array(0));
  strictEqual(observeJournalMode(path, "x", false).mode, "delete");
  strictEqual(observeJournalMode(path, "x", true).mode, "truncate");
  Deno.writeFileSync(`${path}-journal`, new Uint8Array(512));
  strictEqual(observeJournalMode(path, "x", false).mode, "delete");
  strictEqual(observeJournalMode(path, "x", true).mode, "persist");
});

Deno.test("a transaction left open across an acknowledgement reads as in flight, not PERSIST at rest", () => {
  using tmp = tempDir();
  const { path, db } = deleteModeDb(tmp.path);
  // An INSERT before its COMMIT: SQLite has written a journal header whose magic stays zero
  // until the journal is synced, as a store that acknowledges before COMMIT leaves it.
  db.exec("BEGIN IMMEDIATE; INSERT INTO t VALUES (1)");
  const seen = observeJournalMode(path, "after the acknowledgement", true);
  db.exec("ROLLBACK");
  db.close();
  strictEqual(seen.mode, "delete");
  ok(seen.detail?.includes("left open"), seen.detail);
  // PERSIST's COMMIT zeroes the whole header: at rest that is PERSIST's.
  const persist = new Database(`${tmp.path}/p.db`);
  persist.exec("PRAGMA journal_mode = persist; CREATE TABLE t (x); INSERT INTO t VALUES (1)");
  strictEqual(observeJournalMode(`${tmp.path}/p.db`, "x", true).mode, "persist");
  persist.close();
});

Deno.test("legVerdict: honoured only when every observation matches; not applicable to non-SQLite", () => {
  const leg = { ...currentLeg(), name: "wal" as const };
  ok(legVerdict(leg, [{ at: "a", mode: "wal" }, { at: "b", mode: "wal" }]).honoured);
  const mixed = legVerdict(leg, [{ at: "a", mode: "wal" }, { at: "round 2", mode: "delete" }]);
  ok(!mixed.honoured);
  ok(mixed.reason?.includes("at 1 of 2 kill(s)") && mixed.reason.includes("round 2: delete"));
  ok(!legVerdict(leg, []).honoured, "no observation is no evidence");
  const foreign = legVerdict(leg, [{ at: "probe", mode: "not-sqlite" }]);
  ok(!foreign.honoured && foreign.notApplicable && /not applicable/.test(foreign.reason ?? ""));
  ok(legVerdict({ ...leg, name: "default" }, [{ at: "probe", mode: "not-sqlite" }]).honoured);
});

Deno.test("observeJournalMode reads a folder at the store's path as no SQLite file", () => {
  using dir = tempDir();
  Deno.mkdirSync(`${dir.path}/store.db`);
  const seen = observeJournalMode(`${dir.path}/store.db`, "after the run");
  strictEqual(seen.mode, "not-sqlite");
  strictEqual(seen.detail, "a folder, not a file");
});
