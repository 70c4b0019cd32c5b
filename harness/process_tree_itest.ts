import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { type Child, killWhileAlive, reapAll, spawnChild } from "./child.ts";
import { libc, listDir, sendSignal, SIGNALS } from "./_libc.ts";
import { lockWaitOf, lockWaits, procStat, running } from "./_proc.ts";
import { type Survivor, survivorsMessage, treeMechanism } from "./process_tree.ts";
import { Cgroup, ownCgroupDir } from "./_cgroup.ts";
import { waitFor } from "./wait_for.ts";
import { TREE_PROGRAMS } from "./testdata/programs.ts";
import { sqliteLibraryPath } from "../session_db/sqlite/database.ts";
import { fromFileUrl } from "../internal/path.ts";
import { testFolder } from "../internal/_test_folder.ts";

const library = sqliteLibraryPath();
const script = (name: string) => new URL(`./testdata/${name}`, import.meta.url);
const programs = TREE_PROGRAMS;
const linux = Deno.build.os === "linux";

/** The state of a process (`undefined` once it is gone or a zombie). */
function state(pid: number): string | undefined {
  const stat = procStat(libc()!, pid);
  return running(stat) ? stat.state : undefined;
}

/** Starts `tree_root.ts` and waits for its daemons' pids (and its ready file). */
async function grow(mode: "wait" | "selfkill"): Promise<{ child: Child; daemons: number[] }> {
  const runDir = testFolder();
  const child = spawnChild({
    script: script("tree_root.ts"),
    args: [mode],
    runDir,
    library,
    permissions: { run: programs },
  });
  await waitFor(() => {
    try {
      return Deno.statSync(`${runDir}/daemons`).size > 0;
    } catch {
      return false;
    }
  }, {
    what: "the daemons to start",
    deadlineMs: 30_000,
    children: mode === "wait" ? [child] : [],
  });
  const daemons = JSON.parse(Deno.readTextFileSync(`${runDir}/daemons`)) as number[];
  return { child, daemons };
}

/**
 * A test on a grown tree (Linux only): `body` gets its child and daemons; the child is
 * reaped after, whatever happened, and nothing of the tree may survive it.
 */
function treeTest(
  name: string,
  mode: "wait" | "selfkill",
  body: (tree: { child: Child; daemons: number[] }) => Promise<void>,
): void {
  Deno.test({
    name,
    ignore: !linux,
    async fn() {
      const tree = await grow(mode);
      try {
        await body(tree);
      } finally {
        deepStrictEqual(await reapAll([tree.child]), []);
      }
    },
  });
}

treeTest(
  "a kill takes the child's whole tree, setsid and orphaned descendants included",
  "wait",
  async ({ child, daemons }) => {
    for (const pid of daemons) ok(state(pid), `daemon ${pid} runs before the kill`);
    await killWhileAlive(child);
    // Frozen and killed with the child: nothing of the tree is left running.
    await waitFor(() => daemons.every((pid) => state(pid) === undefined), {
      what: "the daemons to be gone",
      deadlineMs: 5_000,
    });
  },
);

treeTest(
  "SIGSTOP stops the whole tree and SIGCONT continues it",
  "wait",
  async ({ child, daemons }) => {
    child.signal("SIGSTOP");
    for (const pid of [child.pid, ...daemons]) strictEqual(state(pid), "T", `pid ${pid}`);
    child.signal("SIGCONT");
    await waitFor(() => [child.pid, ...daemons].every((pid) => state(pid) !== "T"), {
      what: "the tree to run again",
      deadlineMs: 5_000,
    });
  },
);

treeTest(
  "a crash point's self-kill takes the child's whole tree",
  "selfkill",
  async ({ child, daemons }) => {
    const status = await child.status;
    strictEqual(status.signal, "SIGKILL", child.describe());
    await waitFor(() => daemons.every((pid) => state(pid) === undefined), {
      what: "the daemons to die with the child",
      deadlineMs: 2_000,
    });
  },
);

Deno.test({
  name: "this machine keeps trees by a mechanism",
  ignore: !linux,
  fn() {
    const { mechanism, reason } = treeMechanism();
    console.log(`process trees: ${mechanism}${reason ? ` (${reason})` : ""}`);
    ok(mechanism !== "none", reason);
  },
});

/** Runs `tree_owner.ts`, SIGKILLs it once its trees stand, and returns what still runs 2 s on. */
async function killOwner(
  mechanism?: "proc" | "none",
  graceMs = 2_000,
): Promise<{ pids: number[]; left: number[] }> {
  const dir = testFolder();
  const env: Record<string, string> = mechanism ? { CELLS_PROCESS_TREE: mechanism } : {};
  const owner = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--no-lock", script("tree_owner.ts").href, dir],
    env,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const stderr = owner.stderr.pipeTo(new WritableStream());
  try {
    await waitFor(() => {
      try {
        return Deno.statSync(`${dir}/pids`).isFile;
      } catch {
        return false;
      }
    }, { what: "the owner's trees to stand", deadlineMs: 60_000 });
    const pids = JSON.parse(Deno.readTextFileSync(`${dir}/pids`)) as number[];
    strictEqual(pids.length, 6);
    ok(pids.every((pid) => state(pid)), "every process runs (or is stopped) before the kill");
    owner.kill("SIGKILL");
    await owner.status;
    const end = performance.now() + graceMs;
    let left = pids.filter((pid) => state(pid));
    while (left.length && performance.now() < end) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      left = pids.filter((pid) => state(pid));
    }
    return { pids, left };
  } finally {
    try {
      owner.kill("SIGKILL");
    } catch {
      // Killed already.
    }
    await owner.status;
    await stderr.catch(() => {});
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

for (const mechanism of [undefined, "proc"] as const) {
  Deno.test({
    name: `a process SIGKILLed with trees standing leaves nothing within 2 s (${
      mechanism ?? "this machine's mechanism"
    })`,
    ignore: !linux,
    async fn() {
      const { left } = await killOwner(mechanism);
      deepStrictEqual(left, [], `still running: ${left.join(", ")}`);
    },
  });
}

Deno.test({
  name: "without a tree mechanism the same kill leaves the trees running (the check can fail)",
  ignore: !linux,
  async fn() {
    const { left } = await killOwner("none", 300);
    for (const pid of left) sendSignal(libc()!, pid, SIGNALS.SIGKILL);
    strictEqual(left.length, 6, "the children and their four daemons outlived the owner");
  },
});

Deno.test({
  name: "the proc mechanism kills, stops and self-kills whole trees too",
  ignore: !linux || Deno.env.get("CELLS_PROCESS_TREE") !== undefined,
  async fn() {
    const output = await new Deno.Command(Deno.execPath(), {
      args: [
        "test",
        "-A",
        "--no-lock",
        "--filter",
        "/a kill takes|SIGSTOP stops|self-kill takes/",
        fromFileUrl(new URL(import.meta.url)),
      ],
      env: { CELLS_PROCESS_TREE: "proc", NO_COLOR: "1" },
    }).output();
    const text = new TextDecoder().decode(output.stdout);
    ok(
      output.success && /ok \| 3 passed/.test(text),
      text + new TextDecoder().decode(output.stderr),
    );
  },
});

Deno.test({
  name: "a tree still running when it should be gone is named, pid and command line",
  ignore: !linux,
  async fn() {
    const { child, daemons } = await grow("wait");
    try {
      // Settled without a kill first, at once: every process of it is a survivor.
      const survivors = await child.tree!.settle(0);
      deepStrictEqual(survivors.map((s) => s.pid).sort(), [child.pid, ...daemons].sort());
      const message = survivorsMessage(survivors, "the test");
      ok(message.startsWith("3 processes survived the test (killed now): pid "), message);
      ok(message.includes("sleep 300") && message.includes("tree_root.ts"), message);
      await waitFor(() => [child.pid, ...daemons].every((pid) => state(pid) === undefined), {
        what: "the survivors to be killed",
        deadlineMs: 5_000,
      });
    } finally {
      await reapAll([child]);
    }
  },
});

for (const mechanism of [undefined, "proc"] as const) {
  Deno.test({
    name: `a run scope names what outlived the run, and only that (${
      mechanism ?? "this machine's mechanism"
    })`,
    ignore: !linux,
    async fn() {
      const run = async (mode: string) => {
        const output = await new Deno.Command(Deno.execPath(), {
          args: ["run", "-A", "--no-lock", script("run_scope.ts").href, mode],
          env: mechanism ? { CELLS_PROCESS_TREE: mechanism } : {},
        }).output();
        strictEqual(output.code, 0, new TextDecoder().decode(output.stderr));
        return JSON.parse(new TextDecoder().decode(output.stdout)) as Survivor[];
      };
      deepStrictEqual(await run("clean"), []);
      const left = await run("leak");
      deepStrictEqual(left.map((s) => s.commandLine), ["sleep 301.5"]);
      await waitFor(() => state(left[0]!.pid) === undefined, {
        what: "the survivor to be killed",
        deadlineMs: 5_000,
      });
    },
  });
}

Deno.test({
  name: "isolates of one process share one run scope, set up once even when they race",
  ignore: !linux || treeMechanism().mechanism !== "cgroup",
  async fn() {
    for (let round = 0; round < 10; round++) {
      const output = await new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", "--no-lock", script("isolates.ts").href, "6"],
      }).output();
      const stderr = new TextDecoder().decode(output.stderr);
      strictEqual(output.code, 0, stderr);
      const { trees, cgroup } = JSON.parse(new TextDecoder().decode(output.stdout)) as {
        trees: { token: string; cgroupDir: string; cgroupPath: string }[];
        cgroup: string;
      };
      const scopes = new Set(trees.map((tree) => tree.token.split(".")[0]));
      strictEqual(scopes.size, 1, `round ${round}: scopes ${[...scopes].join(", ")}`);
      for (const tree of trees) {
        // The guard waits to find itself in cgroupPath; the parent moves it to cgroupDir.
        ok(tree.cgroupDir.endsWith(tree.cgroupPath), `round ${round}: ${JSON.stringify(tree)}`);
        const scope = tree.cgroupPath.slice(0, tree.cgroupPath.lastIndexOf("/"));
        strictEqual(scope, cgroup, `round ${round}: the process is not in its scope's cgroup`);
      }
    }
  },
});

Deno.test({
  name:
    "lockWaitOf and lockWaits see a process blocked in a lock call that waits, and nothing else",
  ignore: !linux,
  async fn() {
    const runDir = testFolder();
    const file = `${runDir}/locked`;
    Deno.writeTextFileSync(file, "");
    const holder = await Deno.open(file, { read: true });
    holder.lockSync(true);
    const waiter = spawnChild({
      script: new URL(
        `data:application/typescript,${
          encodeURIComponent(
            `const f = Deno.openSync(${JSON.stringify(file)}); f.lockSync(true); Deno.exit(0);`,
          )
        }`,
      ),
      runDir,
      library,
    });
    try {
      const c = libc()!;
      await waitFor(() => lockWaitOf(c, waiter.pid) !== undefined, {
        what: "the child to wait in flock",
        deadlineMs: 30_000,
        children: [waiter],
      });
      ok(/^thread \d+ in flock\(\d+, 2\)$/.test(lockWaitOf(c, waiter.pid)!));
      strictEqual(lockWaitOf(c, Deno.pid), undefined, "this process waits on no lock");
      // lockWaits: true once the waiter has sat in that call for its hold, never for this process.
      const waiting = lockWaits(50);
      await waitFor(() => waiting(() => [[waiter.pid]]), {
        what: "the waiter to be seen held out for 50 ms",
        deadlineMs: 30_000,
        children: [waiter],
      });
      const free = lockWaits(0);
      strictEqual(free(() => [[waiter.pid], [Deno.pid]]), false, "this process was held out");
      holder.unlockSync();
      strictEqual((await waiter.status).code, 0);
    } finally {
      holder.close();
      await reapAll([waiter]);
    }
  },
});

// A run's cgroup is removed by its watchdog; one killed with its owner leaves it behind,
// empty. The next run removes such a cgroup (its owner's pid and start time name no
// process), and leaves a live run's alone.
Deno.test({
  name: "a run removes the empty cgroups of runs that are gone",
  ignore: !linux || treeMechanism().mechanism !== "cgroup",
  async fn() {
    const c = libc()!;
    const own = ownCgroupDir(c)!;
    // Above PID_MAX_LIMIT: never a live process.
    const stale = new Cgroup(c, `${own}/cells-4194305-1`);
    strictEqual(stale.create(), 0);
    strictEqual(new Cgroup(c, `${stale.dir}/tree-left`).create(), 0);
    const output = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--no-lock", script("run_scope.ts").href, "clean"],
    }).output();
    strictEqual(output.code, 0, new TextDecoder().decode(output.stderr));
    // Through libc, as the harness reads cgroups: Deno asks for --allow-all under /sys.
    const left = listDir(c, own) ?? [];
    ok(!left.includes("cells-4194305-1"), `the stale cgroup is still there: ${left.join(", ")}`);
  },
});
