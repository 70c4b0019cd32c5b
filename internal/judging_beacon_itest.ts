// A judge's process names what it judges, and its parent kills it when one judging runs past
// the deadline; the beacon's variable is the process's own, never its children's.
import { deepStrictEqual, ok } from "node:assert/strict";
import { join } from "node:path";
import { JUDGING_BEACON_ENV, watchJudging } from "./judging_beacon.ts";
import { testFolder } from "./_test_folder.ts";

const CHILD = new URL("./testdata/judging_child.ts", import.meta.url).href;

function start(mode: string, beacon: string): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--no-lock", CHILD, mode],
    env: { [JUDGING_BEACON_ENV]: beacon },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

Deno.test("watchJudging: a judging that never returns has its process killed, and is named", async () => {
  const beacon = join(testFolder(), "judging.json");
  const child = start("stall", beacon);
  const watch = watchJudging(child, beacon, 500);
  const status = await child.status;
  watch.clear();
  await child.stdout.cancel();
  await child.stderr.cancel();
  deepStrictEqual(status.signal, "SIGKILL");
  deepStrictEqual(watch.stalled()?.what, "the state before #7 (sync)");
  ok(Date.now() - watch.stalled()!.since >= 500);
});

Deno.test("judging: a child started with the judge's whole environment never sees the beacon", async () => {
  const beacon = join(testFolder(), "judging.json");
  const { stdout, success } = await start("env", beacon).output();
  ok(success);
  deepStrictEqual(new TextDecoder().decode(stdout).trim(), "unset");
});

Deno.test("watchJudgingHere: with no parent watching, a judging that blocks the thread kills its own process, named", async () => {
  const run = (mode: string) =>
    new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--no-lock", CHILD, mode],
      env: { CELLS_JUDGING_DEADLINE_MS: "500" },
      stdout: "piped",
      stderr: "piped",
    }).output();
  const started = Date.now();
  const blocked = await run("block");
  const stderr = new TextDecoder().decode(blocked.stderr);
  deepStrictEqual(blocked.signal, "SIGKILL", stderr);
  ok(Date.now() - started < 15_000, "killed long before the 20 s wait ended");
  ok(
    stderr.includes(
      "The store never returned while opening the store on /run/cell1-x/store.db (judged in this process, which no other process watches): still running after 0.5 s, the process is killed; a store must open and read what a crash left; the run folder is kept: /run/cell1-x",
    ),
    stderr,
  );
  // A judging that returns in time: the thread never keeps the process alive.
  const returned = await run("return");
  ok(returned.success, new TextDecoder().decode(returned.stderr));
  deepStrictEqual(new TextDecoder().decode(returned.stdout).trim(), "returned");
});
