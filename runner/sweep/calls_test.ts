// The syscall sweep can fail and can pass: a rotation split into two transactions (a
// mutant with no crash points) is caught and shrunk to one rotation; the reference
// store's append passes every recorded call. Skipped (said out loud) without the recorder.
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { platformSkipReason } from "../../recorder/build.ts";
import { syscallSweep } from "./calls.ts";

const skip = platformSkipReason();
const quiet = () => {};

Deno.test({
  name: `sweep --syscalls: a two-transaction rotation is caught and shrunk${
    skip ? ` SKIP: ${skip}` : ""
  }`,
  ignore: skip !== undefined,
  async fn() {
    const target =
      new URL("../../cells/testdata/mutants/rotation_two_transactions_unmarked.ts", import.meta.url)
        .href;
    const report = await syscallSweep({
      target,
      seed: 3,
      programs: ["append+rotate"],
      kills: 0,
      log: quiet,
    });
    if ("skip" in report) throw new Error(`the recorder did not run: ${report.skip}`);
    assert(!report.ok, "the sweep passed a rotation split into two transactions");
    const [shrunk] = report.failures;
    assertEquals(shrunk!.program, "rotate");
    assert(
      /rotation atomicity: the interrupted rotate/.test(shrunk!.problems[0]!),
      shrunk!.problems[0],
    );
    assert(shrunk!.replay.includes(`--program rotate --call ${shrunk!.call}`), shrunk!.replay);
  },
});

Deno.test({
  name: `sweep --syscalls: the reference store's append passes every recorded call${
    skip ? ` SKIP: ${skip}` : ""
  }`,
  ignore: skip !== undefined,
  async fn() {
    const target = new URL("../../cells/reference_target.ts", import.meta.url).href;
    const report = await syscallSweep({
      target,
      seed: 3,
      programs: ["append"],
      kills: 1,
      log: quiet,
    });
    if ("skip" in report) throw new Error(`the recorder did not run: ${report.skip}`);
    assert(report.ok, JSON.stringify(report.failures.slice(0, 2)));
    assert(report.states > 10, `only ${report.states} states`);
    assertEquals(report.children, { run: 1, failed: 0 });
  },
});
