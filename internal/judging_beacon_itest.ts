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
