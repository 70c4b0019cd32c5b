// The recorder's hold (FSREC_STOP_KIND=write), stop (FSREC_STOP_AT) and refusal
// (FSREC_REFUSED_FILE) signals, on which cell 5 forces its sweepers' worst-case interleave
// and the stop series stop a process before a lock call.
import { ok, strictEqual } from "node:assert/strict";
import { buildRecorder } from "./build.ts";
import type { RecorderOptions } from "./record.ts";
import { recorderFolder } from "./_test_helpers.ts";
import { exists } from "../internal/fs.ts";
import { fromFileUrl } from "../internal/path.ts";

const built = await buildRecorder();
const ignore = !built.ok;
const library = built.ok ? built.path : "";
const CHILD = fromFileUrl(new URL("./testdata/hold_child.ts", import.meta.url));

function spawn(args: string[], env: Record<string, string> = {}) {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "--no-lock", "-A", CHILD, ...args],
    env: { ...env, NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

/** A run folder whose recorder arms after the first mark in `marks.jsonl`. */
function folder(options: Partial<RecorderOptions>) {
  const marksIn = (run: string) => `${run}/marks.jsonl`;
  const { run, env } = recorderFolder(library, (run) => ({
    mark: marksIn(run),
    armAfterMarks: 1,
    ...options,
  }));
  return { run, marks: marksIn(run), env };
}

/**
 * Runs the hold child recorded with a stop at its first lock call: waits until it is
 * stopped there, checks `whileStopped`, continues it, and asserts it ended well having
 * printed `printed`.
 */
async function stoppedAtFirstLockCall(
  args: (run: string, marks: string) => string[],
  expect: { printed: string; whileStopped?: (run: string) => void },
): Promise<void> {
  const { run, marks, env } = folder({ stopAt: 1 });
  const stop = `${run}/stopped`;
  const child = spawn(args(run, marks), { ...env, FSREC_STOP_FILE: stop });
  try {
    await until("the stop file", () => exists(stop));
    await until("the child to be stopped", () => stateOf(child.pid) === "T");
    expect.whileStopped?.(run);
    child.kill("SIGCONT");
    const output = await child.output();
    ok(output.success, new TextDecoder().decode(output.stderr));
    strictEqual(new TextDecoder().decode(output.stdout).trim(), expect.printed);
  } finally {
    try {
      child.kill("SIGKILL");
    } catch { /* already gone */ }
  }
}

async function until(what: string, condition: () => boolean): Promise<void> {
  const end = performance.now() + 20_000;
  while (!condition()) {
    if (performance.now() > end) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** The process state letter (`T` when stopped), through ps: /proc needs --allow-all in Deno. */
const stateOf = (pid: number) =>
  new TextDecoder().decode(
    new Deno.Command("ps", { args: ["-o", "stat=", "-p", String(pid)], stdout: "piped" })
      .outputSync().stdout,
  ).trim()[0];

Deno.test({
  name: "recorder: stop kind write holds a child just before its first write inside the marks",
  ignore,
  async fn() {
    const { run, marks, env } = folder({ stopAt: 1, stopKind: "write" });
    const stop = `${run}/stopped`;
    const child = spawn(["write", `${run}/db`, marks], { ...env, FSREC_STOP_FILE: stop });
    try {
      await until("the stop file", () => exists(stop));
      await until("the child to be stopped", () => stateOf(child.pid) === "T");
      ok(!exists(`${run}/db/a.txt`), "the write was made before the stop");
      child.kill("SIGCONT");
      const output = await child.output();
      ok(output.success, new TextDecoder().decode(output.stderr));
      strictEqual(Deno.readTextFileSync(`${run}/db/a.txt`), "written");
    } finally {
      try {
        child.kill("SIGKILL");
      } catch { /* already gone */ }
    }
  },
});

/** A lock another process holds, and a call of the child that meets it. */
interface Refusal {
  name: string;
  /** Whether the call waits for the lock (granted once the holder is gone). */
  wait: boolean;
  holder: (file: string, ready: string) => string[];
  locker: (file: string, marks: string) => string[];
  /** What the child prints once the call returned. */
  answer: string;
}

const REFUSALS: Refusal[] = [false, true].map((wait) => ({
  name: `a ${wait ? "blocking" : "refused"} lock call`,
  wait,
  holder: (file, ready) => ["hold", file, ready, "libc.so.6"],
  locker: (file, marks) => ["lock", file, marks, library, wait ? "1" : "0"],
  answer: wait ? "0" : "-1",
}));
REFUSALS.push({
  name: "a flock that waits for another process's",
  wait: true,
  holder: (file, ready) => ["fhold", file, ready],
  locker: (file, marks) => ["flock", file, marks],
  answer: "locked",
});

for (const refusal of REFUSALS) {
  Deno.test({
    name: `recorder: ${refusal.name} while armed creates the refused file`,
    ignore,
    async fn() {
      const { run, marks, env } = folder({});
      const refused = `${run}/refused`;
      const file = `${run}/db/locked`;
      const holder = spawn(refusal.holder(file, `${run}/held`));
      let locker: Deno.ChildProcess | undefined;
      try {
        await until("the holder's lock", () => exists(`${run}/held`));
        locker = spawn(refusal.locker(file, marks), { ...env, FSREC_REFUSED_FILE: refused });
        await until("the refused file", () => exists(refused));
        if (refusal.wait) {
          // It waits for the lock: it is granted once the holder is gone.
          holder.kill("SIGKILL");
          await holder.status;
        }
        const output = await locker.output();
        ok(output.success, new TextDecoder().decode(output.stderr));
        strictEqual(new TextDecoder().decode(output.stdout).trim(), refusal.answer);
      } finally {
        for (const child of [holder, locker]) {
          try {
            child?.kill("SIGKILL");
          } catch { /* already gone */ }
        }
        await holder.status;
      }
    },
  });
}

Deno.test({
  name: "recorder: a granted lock creates no refused file",
  ignore,
  async fn() {
    const { run, marks, env } = folder({});
    const refused = `${run}/refused`;
    const output = await spawn(["lock", `${run}/db/free`, marks, library, "0"], {
      ...env,
      FSREC_REFUSED_FILE: refused,
    }).output();
    ok(output.success, new TextDecoder().decode(output.stderr));
    strictEqual(new TextDecoder().decode(output.stdout).trim(), "0");
    ok(!exists(refused), "a granted lock was taken for a refusal");
  },
});

Deno.test({
  name: "recorder: flock is a lock call: a child is stopped before it, through Deno's lockSync",
  ignore,
  async fn() {
    await stoppedAtFirstLockCall((run, marks) => ["flock", `${run}/db/store.lock`, marks], {
      printed: "locked",
    });
  },
});

// A lock a store takes by making a name only if it is missing (a lock directory, a pid
// file): the stop comes before the call, and a call that finds the name is a refusal.
const TAKES = { mkdir: "a mkdir", rename: "a rename onto a name", excl: "a createNew open" };
for (const kind of ["mkdir", "rename", "excl"] as const) {
  Deno.test({
    name: `recorder: ${TAKES[kind]} is a lock call: stopped before, refused when the name exists`,
    ignore,
    async fn() {
      await stoppedAtFirstLockCall((run, marks) => ["take", kind, `${run}/db/store.lock`, marks], {
        printed: "took",
        whileStopped: (run) =>
          ok(!exists(`${run}/db/store.lock`), "the name was made before the stop"),
      });
      // Taken already (by a holder that put its pid in it): the call is refused, and noted.
      const second = folder({});
      const refused = `${second.run}/refused`;
      const taken = `${second.run}/db/store.lock`;
      if (kind === "excl") Deno.writeTextFileSync(taken, "1");
      else {
        Deno.mkdirSync(taken);
        Deno.writeTextFileSync(`${taken}/pid`, "1");
      }
      const output = await spawn(["take", kind, taken, second.marks], {
        ...second.env,
        FSREC_REFUSED_FILE: refused,
      }).output();
      ok(output.success, new TextDecoder().decode(output.stderr));
      ok(new TextDecoder().decode(output.stdout).trim() !== "took", "the taken name was made");
      ok(exists(refused), `a ${kind} that found the name was not taken for a refusal`);
    },
  });
}
