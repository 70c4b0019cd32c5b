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

Deno.test("a child cannot escape its sandbox", async () => {
  const runDir = await Deno.makeTempDir();
  const outside = await Deno.makeTempDir();
  const otherRun = await Deno.makeTempDir();
  await Deno.writeTextFile(`${otherRun}/secret.txt`, "secret");
  try {
    const child = spawnChild({
      script: script("sandbox_probe.ts"),
      args: [outside, otherRun],
      runDir,
      library,
    });
    const status = await child.status;
    strictEqual(status.code, 0, child.describe());
    const outcomes = JSON.parse(child.stdout.trim());
    deepStrictEqual(outcomes, {
      writeOutside: "NotCapable",
      readOtherRun: "NotCapable",
      connect: "NotCapable",
      run: "NotCapable",
      envOutsideList: "NotCapable",
      writeRunDir: "allowed",
    });
  } finally {
    for (const dir of [runDir, outside, otherRun]) await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("killWhileAlive kills a live child and refuses a dead one", async () => {
  const runDir = await Deno.makeTempDir();
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
  const runDir = await Deno.makeTempDir();
  try {
    const child = spawnChild({ script: script("flood.ts"), runDir, library, outputLimit: 4096 });
    const started = performance.now();
    const error = await rejects(
      () => waitFor(() => false, { what: "never", deadlineMs: 60_000, children: [child] }),
      (e: unknown) => {
        ok(e instanceof WaitError);
        ok(e.message.includes("exited with code 1"), e.message);
        ok(e.message.includes("the end of the flood"), "stderr tail missing");
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

Deno.test("waitFor reports the last observed state at its deadline", async () => {
  await rejects(
    () =>
      waitFor(() => false, { what: "x", deadlineMs: 50, intervalMs: 5, observed: () => "7 acks" }),
    /Gave up waiting for x after \d+ ms: last observed: 7 acks/,
  );
});
