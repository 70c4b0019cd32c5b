// A judge's process for the beacon's tests: `stall` judges something that never returns;
// `env` prints whether a child started with this process's whole environment sees the
// beacon's variable.
import { judging, JUDGING_BEACON_ENV } from "../judging_beacon.ts";

if (Deno.args[0] === "stall") {
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
