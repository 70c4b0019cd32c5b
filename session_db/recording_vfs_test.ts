import { deepStrictEqual, ok } from "node:assert/strict";
import { CrashModel, type FileSet, readVfsLog, snapshotFolder } from "./crash_states.ts";
import { SessionDB } from "./session_db.ts";
import { SessionDBOpenError } from "./errors.ts";
import { sqliteLibraryPath } from "./sqlite/database.ts";
import { runDeno, tempDir } from "./_test_helpers.ts";

const workload = new URL("./testdata/recorded_workload.ts", import.meta.url);
const fixed = new URL("../.cache/sqlite/3.53.2/libsqlite3.so", import.meta.url).pathname;
const hasFixed = (() => {
  try {
    return Deno.statSync(fixed).isFile;
  } catch {
    return false;
  }
})();

function same(a: FileSet, b: FileSet): void {
  deepStrictEqual([...a.keys()].sort(), [...b.keys()].sort());
  for (const [name, content] of a) ok(content.length === b.get(name)!.length, name);
  for (const [name, content] of a) deepStrictEqual(content, b.get(name), name);
}

async function record(
  dir: string,
  count: number,
  end: "close" | "kill",
  extra: string[] = [],
  env = {},
) {
  const result = await runDeno(workload, [dir, String(count), end, ...extra], {
    flags: ["--allow-read", "--allow-write", "--allow-env", "--allow-ffi"],
    env,
  });
  if (end === "kill") ok(result.signal === "SIGKILL", `${result.code}: ${result.stderr}`);
  else ok(result.success, result.stderr);
  const acks = result.stdout.trim().split("\n").map((line) => JSON.parse(line)) as {
    i: number;
    id: number;
    mode: string;
  }[];
  const log = readVfsLog(`${dir}/vfs.log`);
  const model = new CrashModel(new Map(), log.records, `${dir}/db`);
  return { acks, log, model, disk: snapshotFolder(`${dir}/db`) };
}

function recovered(dir: string, files: FileSet): string[] {
  Deno.mkdirSync(dir);
  for (const [name, content] of files) Deno.writeFileSync(`${dir}/${name}`, content);
  const db = SessionDB.open(`${dir}/s.db`);
  try {
    ok(db.checkInvariants().length === 0, db.checkInvariants().join("; "));
    return db.getMessages("s").map((m) => m.content ?? "");
  } finally {
    db.close();
  }
}

Deno.test("recording VFS: every write, sync and unlink of a DELETE workload is in the log", async () => {
  using dir = tempDir();
  const { acks, log, model, disk } = await record(dir.path, 30, "close", [], {
    SESSION_DB_JOURNAL_MODE: "delete",
  });
  ok(acks.length === 30 && acks[0]!.mode === "delete");
  const kinds = new Set(log.records.map((r) => r.kind));
  deepStrictEqual([...kinds].sort(), ["close", "delete", "open", "sync", "write"]);
  // EXTRA syncs the folder with every journal unlink.
  ok(log.records.some((r) => r.kind === "delete" && r.dirSync));
  ok(log.tornBytes === 0);
  same(model.fullImage(), disk);
  same(model.lastSyncImage(), disk); // after a clean close in DELETE+EXTRA, all is durable
});

Deno.test("recording VFS: after a SIGKILL at an acknowledgement the log replays to the disk", async () => {
  using dir = tempDir();
  const { acks, model, disk } = await record(dir.path, 25, "kill");
  same(model.fullImage(), disk);
  const lastSync = recovered(`${dir.path}/last-sync`, model.lastSyncImage());
  ok(lastSync.length >= acks.length, `${lastSync.length} recovered < ${acks.length} acknowledged`);
  deepStrictEqual(lastSync.slice(0, acks.length), acks.map((a) => `m${a.i}`));
});

Deno.test({
  name: "recording VFS: WAL works through it (the shm methods delegate), named through `vfs`",
  ignore: !hasFixed,
  async fn() {
    using dir = tempDir();
    const { acks, log, model, disk } = await record(dir.path, 40, "kill", ["named"], {
      DENO_SQLITE_PATH: fixed,
      SESSION_DB_JOURNAL_MODE: "wal",
    });
    ok(acks.at(-1)!.mode === "wal", `ran in ${acks.at(-1)!.mode}`);
    ok(log.records.some((r) => r.kind === "open" && r.path.endsWith("-wal")));
    same(model.fullImage(), disk);
  },
});

Deno.test("recording VFS: needs an unscoped --allow-ffi, and says so", async () => {
  using dir = tempDir();
  const result = await runDeno(workload, [dir.path, "1", "close"], {
    flags: ["--allow-read", "--allow-write", "--allow-env", `--allow-ffi=${sqliteLibraryPath()}`],
  });
  ok(!result.success);
  ok(/RecordingVfsError: .*unscoped --allow-ffi/.test(result.stderr), result.stderr);
});

Deno.test("SessionDB.open names a VFS that is not registered, with the fix", () => {
  using dir = tempDir();
  try {
    SessionDB.open(`${dir.path}/s.db`, { vfs: "no-such-vfs" });
    throw new Error("opened through a missing VFS");
  } catch (error) {
    ok(error instanceof SessionDBOpenError, String(error));
    ok(/no SQLite VFS named "no-such-vfs" is registered \(register it first/.test(error.message));
  }
});
