// A judge's process for the beacon's tests: `stall` judges something that never returns;
// `env` prints whether a child started with this process's whole environment sees the
// beacon's variable; `block` and `return` (no parent watching) judge with the process's own
// watcher something that blocks the thread for 20 s, or returns at once.
import {
  enterJudging,
  judging,
  JUDGING_BEACON_ENV,
  judgingIn,
  watchJudgingHere,
} from "../judging_beacon.ts";

if (Deno.args[0] === "block" || Deno.args[0] === "return") {
  await watchJudgingHere();
  judgingIn("/run/cell1-x", { cell: 1 });
  const leave = enterJudging("opening the store on /run/cell1-x/store.db", "/run/cell1-x/store.db");
  if (Deno.args[0] === "block") {
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20_000);
  }
  leave();
  console.log("returned");
} else if (Deno.args[0] === "stall") {
  // A store waiting on a timer without end (an empty promise alone would end the process).
  await judging("the state before #7 (sync)", () => new Promise(() => setInterval(() => {}, 50)));
} else {
  const child = await new Deno.Command(Deno.execPath(), {
    args: ["eval", `console.log(Deno.env.get("${JUDGING_BEACON_ENV}") ?? "unset")`],
    env: Deno.env.toObject(),
    clearEnv: true,
  }).output();
  console.log(new TextDecoder().decode(child.stdout).trim());
}
