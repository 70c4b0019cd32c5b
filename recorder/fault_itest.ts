// Injected faults (FSREC_FAIL_*): the k-th write, sync or read of a watched file fails
// with the chosen errno, or a write comes back short, and the rest of the run goes on;
// the log marks the call injected; a failed fsync's writes are lost at the next power
// loss even after a later fsync succeeds; the reference store turns the faults into a
// thrown storage error on the failing operation and keeps what it acknowledged.
import { deepStrictEqual, match, ok, strictEqual } from "node:assert/strict";
import { buildRecorder } from "./build.ts";
import { killEnd, powerLossStates } from "./crash_states.ts";
import { injectedFaults, logProblems, readLog, type RecorderLog } from "./log.ts";
import { denoCacheDir, recorderEnv, type RecorderOptions } from "./record.ts";
import { SessionDB } from "../session_db/mod.ts";
import { fromFileUrl } from "../internal/path.ts";
import { testFolder } from "../internal/_test_folder.ts";

const built = await buildRecorder();
const ignore = !built.ok;
const library = built.ok ? built.path : "";
const CHILD = fromFileUrl(new URL("./testdata/fault_child.ts", import.meta.url));
const STORE = fromFileUrl(new URL("./testdata/fault_store.ts", import.meta.url));

const ENOSPC = "No space left on device (os error 28)";
const EIO = "Input/output error (os error 5)";

/** Runs a child script under the recorder; returns what it printed (JSON) and the log. */
async function run(
  script: string,
  args: (run: string) => string[],
  options: Partial<RecorderOptions>,
): Promise<{ printed: unknown; log: RecorderLog; run: string }> {
  const folder = testFolder({ prefix: "recorder-fault-" });
  Deno.mkdirSync(`${folder}/db`);
  const env = recorderEnv({
    library,
    watched: `${folder}/db`,
    log: `${folder}/fs.log`,
    mark: `${folder}/marks.jsonl`,
    ignore: [denoCacheDir(), folder],
    ...options,
  });
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--no-lock", "-A", script, ...args(folder)],
    env: { ...env, NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(output.stdout);
  ok(output.success, `${text}\n${new TextDecoder().decode(output.stderr)}`);
  const log = readLog(`${folder}/fs.log`);
  deepStrictEqual(logProblems(log), []);
  return { printed: JSON.parse(text), log, run: folder };
}

async function steps(options: Partial<RecorderOptions>, ...list: string[]) {
  const { printed, log, run: folder } = await run(CHILD, (f) => [`${f}/db/f`, ...list], options);
  return { outcomes: printed as unknown[], log, run: folder };
}

const content = (folder: string) => Deno.readTextFileSync(`${folder}/db/f`);

Deno.test({
  name: "fault: the second write fails with ENOSPC, the others are made",
  ignore,
  async fn() {
    const { outcomes, log, run: folder } = await steps(
      { failAt: 2, failKind: "write", failErrno: "ENOSPC" },
      "w:one",
      "w:two",
      "w:three",
      "s",
    );
    deepStrictEqual(outcomes, [3, ENOSPC, 5, 0]);
    strictEqual(content(folder), "onethree");
    const faults = injectedFaults(log);
    strictEqual(faults.length, 1, faults.join("\n"));
    match(faults[0]!, /^#\d+ write ".*\/db\/f" at 3: failed with ENOSPC \(injected\)$/);
    const failed = log.records.filter((r) => r.failed);
    ok(failed.length === 1 && failed[0]!.counted && failed[0]!.injected, "one counted failure");
    ok(!log.records.some((r) => r.kind === "read"), "reads are logged only when failed");
  },
});

Deno.test({
  name: "fault: EIO on a write, and every write from the k-th on with failCount Infinity",
  ignore,
  async fn() {
    const once = await steps({ failAt: 1, failKind: "write" }, "w:one", "w:two");
    deepStrictEqual(once.outcomes, [EIO, 3]);
    strictEqual(content(once.run), "two");
    const full = await steps(
      { failAt: 2, failKind: "write", failErrno: "ENOSPC", failCount: Infinity },
      "w:one",
      "w:two",
      "w:three",
      "s",
    );
    deepStrictEqual(full.outcomes, [3, ENOSPC, ENOSPC, 0]);
    strictEqual(injectedFaults(full.log).length, 2);
  },
});

Deno.test({
  name: "fault: a short write writes the first half and returns its count",
  ignore,
  async fn() {
    const { outcomes, log, run: folder } = await steps(
      { failAt: 1, failKind: "write", failShort: true, data: true },
      "w:abcdef",
      "w:gh",
    );
    deepStrictEqual(outcomes, [3, 2]);
    strictEqual(content(folder), "abcgh");
    deepStrictEqual(injectedFaults(log).map((line) => line.replace(/^#\d+ /, "")), [
      `write "${folder}/db/f" at 0: short, 3 of 6 bytes (injected)`,
    ]);
    const short = log.records.find((r) => r.injected)!;
    ok(!short.failed && new TextDecoder().decode(short.data) === "abc", "the short write's data");
  },
});

Deno.test({
  name: "fault: the first read fails with EIO, the next one reads",
  ignore,
  async fn() {
    const { outcomes, log } = await steps(
      { failAt: 1, failKind: "read" },
      "w:hello",
      "r",
      "r",
    );
    deepStrictEqual(outcomes, [5, EIO, 5]);
    const faults = injectedFaults(log);
    strictEqual(faults.length, 1, faults.join("\n"));
    match(faults[0]!, /^#\d+ read ".*\/db\/f" at 0: failed with EIO \(injected\)$/);
    ok(!log.records.find((r) => r.kind === "read")!.counted, "a read is never a crash point");
  },
});

/** The file's content in the last power-loss state's synced choice (ext4-ordered). */
function syncedAtEnd(log: RecorderLog): string {
  const states = [...powerLossStates(log, { profile: "ext4-ordered" })];
  const synced = states.find((state) => state.label === "end: synced")!;
  return new TextDecoder().decode(synced.files.get("f"));
}

Deno.test({
  name:
    "fault: after a failed fsync its writes are lost at a power loss though a later fsync succeeds",
  ignore,
  async fn() {
    // The first fsync fails; the data is recorded for the power-loss states.
    const failedSync = { failAt: 1, failKind: "sync", data: true } as const;
    const faulted = await steps(failedSync, "w:one", "s", "w:two", "s");
    deepStrictEqual(faulted.outcomes, [3, EIO, 3, 0]);
    match(injectedFaults(faulted.log)[0]!, /^#\d+ sync \(fsync\) ".*\/db\/f": failed with EIO/);
    // A SIGKILL keeps the page cache: both writes; a power loss keeps only the second.
    strictEqual(new TextDecoder().decode(killEnd(faulted.log).files.get("f")), "onetwo");
    strictEqual(syncedAtEnd(faulted.log), "\0\0\0two");
    // Without the fault both survive; with it, bytes written again after it land.
    const clean = await steps({ data: true }, "w:one", "s", "w:two", "s");
    strictEqual(syncedAtEnd(clean.log), "onetwo");
    const rewritten = await steps(failedSync, "w:one", "d", "at:0", "w:one", "w:two", "d");
    deepStrictEqual(rewritten.outcomes, [3, EIO, 0, 3, 3, 0]);
    strictEqual(syncedAtEnd(rewritten.log), "onetwo");
  },
});

/** What the store child printed for one append: the message id, or the error it threw. */
type Attempt = number | { error: string; message: string; code: number | null };

/** Runs the store child; returns the journal mode it had and its three attempts. */
async function storeRun(mode: string, fault: Partial<RecorderOptions>) {
  const { printed, log, run: folder } = await run(
    STORE,
    (folder) => [`${folder}/db/s.db`, mode, `${folder}/marks.jsonl`],
    { failAt: 1, armAfterMarks: 1, ...fault },
  );
  const { mode: chosen, outcomes } = printed as { mode: string; outcomes: Attempt[] };
  return { chosen, outcomes, log, folder };
}

/** The journal mode the store takes when asked for `mode` (WAL falls back on some SQLite). */
function chosenMode(mode: "wal" | "delete"): string {
  const db = SessionDB.open(`${testFolder()}/probe.db`, { journalMode: mode });
  try {
    return db.journalMode;
  } finally {
    db.close();
  }
}

const SQLITE_IOERR = 10, SQLITE_CORRUPT = 11, SQLITE_FULL = 13;

for (const mode of ["wal", "delete"] as const) {
  const taken = chosenMode(mode);
  const sidecar = taken === "wal" ? "-wal" : "-journal";
  const cases: [Partial<RecorderOptions>, number, string][] = [
    [{ failKind: "write", failErrno: "ENOSPC" }, SQLITE_FULL, "first write fails with ENOSPC"],
    [{ failKind: "write", failErrno: "EIO" }, SQLITE_IOERR, "first write fails with EIO"],
    [{ failKind: "sync", failErrno: "EIO" }, SQLITE_IOERR, "first fsync fails with EIO"],
    [
      { failKind: "write", failErrno: "ENOSPC", failFile: sidecar, failCount: Infinity },
      SQLITE_FULL,
      `${sidecar} cannot grow (ENOSPC)`,
    ],
  ];
  for (const [fault, code, what] of cases) {
    Deno.test({
      name:
        `fault: the reference store (${mode} asked, ${taken}) throws on the append whose ${what}`,
      ignore,
      async fn() {
        const { chosen, outcomes, log, folder } = await storeRun(mode, fault);
        strictEqual(`-${chosen}`.replace("-delete", "-journal"), sidecar);
        const [m0, m1, m2] = outcomes;
        const faults = injectedFaults(log);
        if (fault.failCount === undefined) strictEqual(faults.length, 1, faults.join("\n"));
        else ok(faults.length >= 1, "nothing was injected");
        if (fault.failFile) ok(faults.every((line) => line.includes(`${sidecar}"`)), faults[0]);
        ok(typeof m0 === "number", `m0 was not appended: ${JSON.stringify(m0)}`);
        ok(typeof m1 === "object", `m1 was acknowledged despite the fault: ${m1}`);
        strictEqual(m1.error, "SessionDBStorageError", m1.message);
        strictEqual(m1.code, code, m1.message);
        ok(typeof m2 === "number", `the store refused m2 after the fault: ${JSON.stringify(m2)}`);
        // A fresh process (this one, no recorder) reads what was acknowledged, and only it.
        const db = SessionDB.open(`${folder}/db/s.db`);
        try {
          deepStrictEqual(db.getMessages("s1").map((m) => m.content), ["m0", "m2"]);
        } finally {
          db.close();
        }
      },
    });
  }
}

Deno.test({
  name: "fault: the reference store (delete) throws on the append whose first read fails with EIO",
  ignore,
  async fn() {
    const { outcomes, log, folder } = await storeRun("delete", { failKind: "read" });
    const [m0, m1, m2] = outcomes;
    // The transaction's first read is the header's change counter (offset 24).
    match(injectedFaults(log).join("\n"), /^#\d+ read ".*\/db\/s\.db" at 24: failed with EIO/);
    ok(typeof m0 === "number" && typeof m2 === "number", JSON.stringify(outcomes));
    ok(typeof m1 === "object", `m1 was acknowledged despite the fault: ${m1}`);
    strictEqual(m1.error, "SessionDBStorageError", m1.message);
    // SQLite reports this I/O error as a malformed database, not as SQLITE_IOERR.
    strictEqual(m1.code, SQLITE_CORRUPT, m1.message);
    const db = SessionDB.open(`${folder}/db/s.db`);
    try {
      deepStrictEqual(db.getMessages("s1").map((m) => m.content), ["m0", "m2"]);
    } finally {
      db.close();
    }
  },
});
