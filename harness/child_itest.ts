import { deepStrictEqual, ok, rejects, strictEqual } from "node:assert/strict";
import {
  classifyExit,
  KillError,
  killWhileAlive,
  liveChildren,
  LOST,
  reapAll,
  spawnChild,
  WON,
} from "./child.ts";
import { WaitError, waitFor } from "./wait_for.ts";
import { sqliteLibraryPath } from "../session_db/sqlite/database.ts";
import { fromFileUrl } from "../internal/path.ts";
import { testFolder } from "../internal/_test_folder.ts";

const library = sqliteLibraryPath();
const script = (name: string) => new URL(`./testdata/${name}`, import.meta.url);

Deno.test("classifyExit keeps won, lost, killed and crash disjoint", () => {
  const s = (code: number, signal: Deno.Signal | null = null) => ({
    success: code === 0,
    code,
    signal,
  });
  strictEqual(classifyExit(s(WON)).kind, "won");
  strictEqual(classifyExit(s(LOST)).kind, "lost");
  strictEqual(classifyExit(s(1)).kind, "crash");
  strictEqual(classifyExit(s(3)).kind, "crash");
  strictEqual(classifyExit(s(137, "SIGKILL")).kind, "killed");
  strictEqual(classifyExit(s(143, "SIGTERM")).kind, "crash");
});

/** Runs the sandbox probe in a fresh run directory; returns one outcome per attempt. */
async function sandboxed(
  attempts: (runDir: string) => [string, string][],
  extra: { env?: Record<string, string> } = {},
): Promise<string[]> {
  const runDir = testFolder();
  try {
    const child = spawnChild({
      script: script("sandbox_probe.ts"),
      args: [JSON.stringify(attempts(runDir))],
      runDir,
      library,
      ...extra,
    });
    const status = await child.status;
    strictEqual(status.code, 0, child.describe());
    strictEqual(liveChildren().length, 0, "a child outlived its test");
    return JSON.parse(child.stdout.trim());
  } finally {
    await Deno.remove(runDir, { recursive: true });
  }
}

/** A folder outside any run directory, with a file in it, removed after `fn`. */
async function withOutside<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = testFolder();
  await Deno.writeTextFile(`${dir}/secret.txt`, "secret");
  try {
    return await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

const packageFile = fromFileUrl(new URL("./child.ts", import.meta.url));

Deno.test("a child reads its run directory and the package's module files", async () => {
  const outcomes = await sandboxed((runDir) => {
    Deno.writeTextFileSync(`${runDir}/mine.txt`, "mine");
    return [["read", `${runDir}/mine.txt`], ["read", packageFile]];
  });
  deepStrictEqual(outcomes, ["allowed", "allowed"]);
});

Deno.test("a child cannot read outside its run directory and module files", async () => {
  await withOutside(async (outside) => {
    const outcomes = await sandboxed(() => [
      ["read", `${outside}/secret.txt`],
      ["read", "/etc/passwd"],
    ]);
    deepStrictEqual(outcomes, ["NotCapable", "NotCapable"]);
  });
});

Deno.test("a child writes its run directory and nowhere else", async () => {
  await withOutside(async (outside) => {
    const outcomes = await sandboxed((runDir) => [
      ["write", `${runDir}/inside.txt`],
      ["write", `${outside}/escape.txt`],
      ["write", `${outside}/secret.txt`],
      ["write", `${packageFile}.escape`],
    ]);
    deepStrictEqual(outcomes, ["allowed", "NotCapable", "NotCapable", "NotCapable"]);
    strictEqual(await Deno.readTextFile(`${outside}/secret.txt`), "secret");
  });
});

Deno.test("a child cannot open a network connection", async () => {
  // Refused by the permission check before any packet leaves (loopback only anyway).
  const outcomes = await sandboxed(() => [["connect", "127.0.0.1:9"], ["listen", "0"]]);
  deepStrictEqual(outcomes, ["NotCapable", "NotCapable"]);
});

Deno.test("a child cannot run a process", async () => {
  const outcomes = await sandboxed(() => [["run", "true"], ["run", Deno.execPath()]]);
  deepStrictEqual(outcomes, ["NotCapable", "NotCapable"]);
});

Deno.test("a child reads only the environment variables on its list", async () => {
  // HOME and PATH are in the child's environment (deno needs them) but not on its list.
  const outcomes = await sandboxed(() => [
    ["env", "HOME"],
    ["env", "PATH"],
    ["env", "DENO_SQLITE_PATH"],
    ["env", "CELL_EXTRA"],
  ], { env: { CELL_EXTRA: "1" } });
  deepStrictEqual(outcomes, ["NotCapable", "NotCapable", "allowed", "allowed"]);
});

Deno.test("a child loads no foreign library but SQLite", async () => {
  const other = ["/usr/lib/x86_64-linux-gnu/libz.so.1", "/lib/x86_64-linux-gnu/libm.so.6"]
    .find((path) => {
      try {
        return Deno.statSync(path).isFile;
      } catch {
        return false;
      }
    }) ?? "/usr/lib/libSystem.B.dylib";
  const outcomes = await sandboxed(() => [["ffi", other], ["ffi", library]]);
  deepStrictEqual(outcomes, ["NotCapable", "allowed"]);
});

Deno.test("killWhileAlive kills a live child and refuses a dead one", async () => {
  const runDir = testFolder();
  try {
    const child = spawnChild({ script: script("sleeper.ts"), runDir, library });
    await waitFor(async () => {
      try {
        await Deno.stat(`${runDir}/ready`);
        return true;
      } catch {
        return false;
      }
    }, { what: "the sleeper to start", deadlineMs: 30_000, children: [child] });
    await killWhileAlive(child);
    strictEqual(child.exited?.signal, "SIGKILL");
    await rejects(() => killWhileAlive(child), KillError);
    strictEqual(liveChildren().length, 0, "a child outlived its test");
  } finally {
    await reapAll();
    await Deno.remove(runDir, { recursive: true });
  }
});

Deno.test("waitFor fails at once with the stderr of a child that died", async () => {
  const runDir = testFolder();
  try {
    const child = spawnChild({ script: script("flood.ts"), runDir, library, outputLimit: 4096 });
    const started = performance.now();
    const error = await rejects(
      () => waitFor(() => false, { what: "never", deadlineMs: 60_000, children: [child] }),
      (e: unknown) => {
        ok(e instanceof WaitError);
        ok(e.message.includes("exited with code 1"), e.message);
        ok(e.message.includes("the end of the flood"), "stderr tail missing");
        ok(e.message.split("\n")[0]!.endsWith("the end of the flood"), "no lead line");
        ok(e.message.length < 8000, "stderr is not bounded");
        return true;
      },
    );
    void error;
    ok(performance.now() - started < 30_000, "did not fail at once");
  } finally {
    await reapAll();
    await Deno.remove(runDir, { recursive: true });
  }
});

Deno.test("a dead child's description leads with its uncaught error", async () => {
  const runDir = testFolder();
  try {
    const child = spawnChild({ script: script("uncaught.ts"), runDir, library });
    await child.status;
    const [first] = child.describe().split("\n");
    ok(/exited with code 1; stderr: error: Uncaught .*serialize a BigInt/.test(first!), first);
    ok(child.describe().includes("[store] opening"), "the stderr tail is missing");
  } finally {
    await reapAll();
    await Deno.remove(runDir, { recursive: true });
  }
});

Deno.test("waitFor reports the last observed state at its deadline", async () => {
  await rejects(
    () =>
      waitFor(() => false, { what: "x", deadlineMs: 50, intervalMs: 5, observed: () => "7 acks" }),
    /Gave up waiting for x after \d+ ms: last observed: 7 acks/,
  );
});
