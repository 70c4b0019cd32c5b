import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { buildRecorder } from "./build.ts";
import { killEnd, killStates, powerLossStates } from "./crash_states.ts";
import { logProblems, readLog } from "./log.ts";
import { denoCacheDir, recorderEnv, type RecorderOptions } from "./record.ts";
import { recorderFolder } from "./_test_helpers.ts";
import { fromFileUrl } from "../internal/path.ts";
import { testFolder } from "../internal/_test_folder.ts";

const built = await buildRecorder();
const ignore = built.ok ? false : `SKIP: ${built.reason}`;
const library = built.ok ? built.path : "";

function assert(condition: unknown, message: string): asserts condition {
  if (!condition) throw new Error(message);
}

async function runChild(
  script: URL,
  args: string[],
  env: Record<string, string>,
): Promise<Deno.CommandOutput> {
  return await new Deno.Command(Deno.execPath(), {
    args: ["run", "--no-lock", "-A", fromFileUrl(script), ...args],
    env: { ...env, NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
}

/** A run folder with an empty watched `db/` and the recorder's environment for it. */
function runFolder(options: Partial<RecorderOptions> = {}) {
  return recorderFolder(library, () => options);
}

const FS_CALLS = new URL("./testdata/fs_calls.ts", import.meta.url);
const NODE_SQLITE_CHILD = new URL("./testdata/node_sqlite_appends.ts", import.meta.url);

Deno.test({
  name: "recorder: a watched write is recorded with its data, an unwatched one is not",
  ignore: !!ignore,
  async fn() {
    const { run, log, env } = runFolder({ data: true });
    const output = await runChild(FS_CALLS, ["write", `${run}/db`, `${run}/outside.txt`], env);
    assert(output.success, new TextDecoder().decode(output.stderr));
    const parsed = readLog(log);
    const kinds = parsed.records.filter((r) => r.counted).map((r) => r.kind);
    const writes = parsed.records.filter((r) => r.kind === "write");
    assert(writes.length === 2, `expected 2 watched writes, got ${writes.length}`);
    assert(new TextDecoder().decode(writes[0]!.data) === "watched", "the watched write's data");
    assert(!parsed.records.some((r) => r.path.includes("outside")), "the unwatched file leaked in");
    for (const kind of ["open", "write", "sync", "rename", "unlink"]) {
      assert(kinds.includes(kind as never), `no ${kind} recorded: ${kinds.join(",")}`);
    }
    assert(logProblems(parsed).length === 0, logProblems(parsed).join("\n"));
    // An open says whether it made its file.
    const made = (name: string) =>
      parsed.records.filter((r) => r.kind === "open" && r.path.endsWith(name)).map((r) => r.extra);
    assert(String(made("/a.txt")) === "1" && String(made("/b.txt")) === "0", `${made("/b.txt")}`);
    // The folder sync made the rename durable under strict POSIX: b.txt survives.
    const end = [...powerLossStates(parsed, { profile: "posix" })].at(-1)!;
    assert(end.files.has("b.txt") && !end.files.has("a.txt"), [...end.files.keys()].join(","));
  },
});

Deno.test({
  name: "recorder: pwritev2 says whether it synced (RWF_DSYNC) and where it appended",
  ignore: !!ignore,
  async fn() {
    const { run, log, env } = runFolder({ data: true });
    const child = new Deno.Command("python3", {
      args: [fromFileUrl(new URL("./testdata/pwritev2.py", import.meta.url)), `${run}/db`],
      env,
      stdout: "piped",
      stderr: "piped",
    });
    const output = await child.output();
    assert(output.success, new TextDecoder().decode(output.stderr));
    const parsed = readLog(log);
    const writes = parsed.records.filter((r) => r.kind === "write")
      .map((r) => [r.a, new TextDecoder().decode(r.data), r.synchronous]);
    assertEquals(writes, [[0, "one", true], [3, "two", false], [1, "xx", false]]);
    assertEquals(new TextDecoder().decode(killEnd(parsed).files.get("p.log")), "oxxtwo");
    // Under ext4-ordered the synchronous write's commit keeps the name too: "one" is durable.
    const synced = [...powerLossStates(parsed, { profile: "ext4-ordered" })]
      .find((state) => state.label === "end: synced")!;
    assertEquals(new TextDecoder().decode(synced.files.get("p.log")), "one");
  },
});

// What the recorder cannot vouch for is a problem of its log, never a pass.
const PROBLEMS: {
  name: string;
  options: Partial<RecorderOptions>;
  args: (run: string) => string[];
  problem: string;
}[] = [
  {
    name: "a write outside the watched folder and the ignore list is a problem",
    options: { ignore: [denoCacheDir()] },
    args: (run) => ["write", `${run}/db`, `${run}/outside.txt`],
    problem: "outside.txt",
  },
  {
    name: "a log past its bound is a problem, never a pass",
    options: { data: true, maxBytes: 200 },
    args: (run) => ["write", `${run}/db`, `${run}/outside.txt`],
    problem: "passed its bound",
  },
  {
    name: "a call it cannot model (a symlink into the folder) is a problem",
    options: {},
    args: (run) => ["symlink", `${run}/db`],
    problem: "cannot model",
  },
  {
    name: "a copy made in the kernel (copy_file_range) is a problem, named",
    options: { ignore: [denoCacheDir()] },
    args: (run) => ["copy", `${run}/db`, `${run}/source.txt`],
    problem: "copy_file_range (a copy made in the kernel",
  },
  {
    name: "a file renamed into the folder from outside is a problem, named",
    options: { ignore: [denoCacheDir()] },
    args: (run) => ["move-in", `${run}/db`, `${run}/staged.txt`],
    problem: "a rename moves",
  },
];

for (const { name, options, args, problem } of PROBLEMS) {
  Deno.test({
    name: `recorder: ${name}`,
    ignore: !!ignore,
    async fn() {
      const { run, log, env } = runFolder(options);
      const output = await runChild(FS_CALLS, args(run), env);
      assert(output.success, new TextDecoder().decode(output.stderr));
      const problems = logProblems(readLog(log));
      assert(problems.some((p) => p.includes(problem)), problems.join("\n"));
    },
  });
}

Deno.test({
  name: "recorder: a crash at k gives SIGKILL and exactly k-1 recorded calls",
  ignore: !!ignore,
  async fn() {
    const { run, log, env } = runFolder({ crashAt: 3 });
    const output = await runChild(FS_CALLS, ["write", `${run}/db`, `${run}/outside.txt`], env);
    assert(output.signal === "SIGKILL", `expected SIGKILL, got ${output.signal ?? output.code}`);
    const counted = readLog(log).records.filter((r) => r.counted).length;
    assert(counted === 2, `expected 2 recorded calls before the kill, got ${counted}`);
  },
});

async function nodeSqliteRun(synchronous: string) {
  const probe = runFolder();
  const acks = `${probe.run}/acks.jsonl`;
  const { run, log, env } = { ...probe, env: { ...probe.env, FSREC_DATA: "1", FSREC_MARK: acks } };
  const output = await runChild(NODE_SQLITE_CHILD, [`${run}/db/s.db`, synchronous, acks], env);
  assert(output.success, new TextDecoder().decode(output.stderr));
  return readLog(log);
}

Deno.test({
  name: "recorder: the -shm mapping is excluded, the WAL's writes are recorded",
  ignore: !!ignore,
  async fn() {
    const parsed = await nodeSqliteRun("full");
    const maps = parsed.records.filter((r) => r.kind === "mmap");
    assert(maps.length > 0 && maps.every((r) => r.extra === 1), "the -shm mmap was not seen");
    assert(logProblems(parsed).length === 0, logProblems(parsed).join("\n"));
    assert(
      parsed.records.some((r) => r.kind === "write" && r.path === "" && r.data.length > 0),
      "no data",
    );
    const kills = [...killStates(parsed)];
    assert(
      kills.length === parsed.records.filter((r) => r.counted).length + 1,
      "one kill state per call",
    );
    assertEquals(killEnd(parsed), kills.at(-1), "killEnd is the last kill state");
  },
});

async function lostAcks(synchronous: string, profile: "posix" | "ext4-ordered") {
  const { DatabaseSync } = await import("node:sqlite");
  const parsed = await nodeSqliteRun(synchronous);
  const scratch = testFolder({ prefix: "recorder-states-" });
  const { writeImage } = await import("./image.ts");
  let states = 0;
  const losses: string[] = [];
  for (const state of powerLossStates(parsed, { profile, samples: 4 })) {
    states++;
    writeImage(state.files, scratch);
    let rows = 0;
    if (state.files.has("s.db")) {
      const db = new DatabaseSync(`${scratch}/s.db`);
      try {
        rows = Number(db.prepare("SELECT count(*) AS n FROM m").get()!.n);
      } catch {
        rows = 0; // no table yet
      }
      db.close();
    }
    if (rows < state.acks.length) losses.push(`${state.label}: ${rows} < ${state.acks.length}`);
  }
  Deno.removeSync(scratch, { recursive: true });
  return { states, losses };
}

Deno.test({
  name: "recorder: node:sqlite WAL/NORMAL loses acknowledged rows in some power-loss state",
  ignore: !!ignore,
  async fn() {
    const { states, losses } = await lostAcks("normal", "ext4-ordered");
    assert(states > 1, "no states");
    assert(losses.length > 0, `WAL/NORMAL lost nothing in ${states} states`);
  },
});

Deno.test({
  name: "recorder: node:sqlite WAL/FULL never loses an acknowledged row",
  ignore: !!ignore,
  async fn() {
    for (const profile of ["posix", "ext4-ordered"] as const) {
      const { states, losses } = await lostAcks("full", profile);
      assert(states > 10, `only ${states} states`);
      assert(losses.length === 0, `${profile}: ${losses.slice(0, 3).join("; ")}`);
    }
  },
});

// LD_PRELOAD splits its list at spaces and colons: a library under such a project path
// never loaded, and every recorded series ran silently unrecorded.
Deno.test({
  name: "recorder: a project path with a space still preloads, through a copy",
  ignore: !!ignore,
  async fn() {
    const root = testFolder({ prefix: "a project " });
    const moved = await buildRecorder({ root });
    assert(moved.ok, moved.ok ? "" : moved.reason);
    assert(!/[ :]/.test(moved.path), `LD_PRELOAD cannot name ${moved.path}`);
    const { run, log, env } = recorderFolder(moved.path, () => ({ data: true }));
    const output = await runChild(FS_CALLS, ["write", `${run}/db`, `${run}/outside.txt`], env);
    const stderr = new TextDecoder().decode(output.stderr);
    assert(output.success && !stderr.includes("cannot be preloaded"), stderr);
    const writes = readLog(log).records.filter((r) => r.kind === "write");
    assert(writes.length === 2, `expected 2 watched writes, got ${writes.length}`);
    const tmp = Deno.env.get("TMPDIR");
    Deno.env.set("TMPDIR", root);
    try {
      const refused = await buildRecorder({ root });
      assert(!refused.ok && /set TMPDIR/.test(refused.reason), JSON.stringify(refused));
    } finally {
      if (tmp === undefined) Deno.env.delete("TMPDIR");
      else Deno.env.set("TMPDIR", tmp);
    }
    await Deno.remove(root, { recursive: true });
  },
});

// FSREC_IGNORE was split at colons: a run folder whose path held one was logged as a write
// outside the watched folder, and the power-loss cells failed a correct store there.
Deno.test({
  name: "recorder: an ignored folder whose path holds a colon stays ignored",
  ignore: !!ignore,
  async fn() {
    const parent = testFolder();
    const run = `${parent}/run:with:colons`;
    Deno.mkdirSync(`${run}/db`, { recursive: true });
    const log = `${run}/fs.log`;
    const env = recorderEnv({ library, watched: `${run}/db`, log, ignore: [denoCacheDir(), run] });
    const output = await runChild(FS_CALLS, ["write", `${run}/db`, `${run}/outside.txt`], env);
    assert(output.success, new TextDecoder().decode(output.stderr));
    const problems = logProblems(readLog(log));
    assert(problems.length === 0, problems.join("\n"));
    await Deno.remove(parent, { recursive: true });
  },
});
