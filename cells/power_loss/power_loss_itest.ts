// The power-loss tier on the reference store (current leg; cells 1, 3 and 4), and the reason the tier
// exists: stores with synchronous=OFF, and in DELETE mode with FULL (named with its cause and
// fix), are caught by it while the SIGKILL cell stays GREEN on them; a torn last line and a
// stale next id after recovery are caught too. Small runs here; `deno task powerloss` is the big one.
import { currentLeg } from "../../harness/legs.ts";
import { ok } from "node:assert/strict";
import { powerLossForkCell, powerLossForkRun } from "../fork_determinism/power_loss.ts";
import { powerLossPrefixCell, powerLossPrefixRun } from "../prefix_durability/power_loss.ts";
import { powerLossRotationCell, powerLossRotationRun } from "../rotation_atomicity/power_loss.ts";
import { prefixDurabilityCell } from "../prefix_durability/cell.ts";
import { runDefinitions } from "../engine/run_definitions.ts";
import { testFolder } from "../../internal/_test_folder.ts";

const reference = new URL("../reference_target.ts", import.meta.url);
const small = { minAcknowledged: 20, subsets: 6, instants: 6 };

for (const test of await powerLossPrefixCell({ target: reference, ...small })) Deno.test(test);
for (
  const test of await powerLossRotationCell({
    target: reference,
    ...small,
    minAcknowledged: 5,
    kills: ["ack"],
  })
) {
  Deno.test(test);
}

for (const test of await powerLossForkCell({ target: reference, ...small, minAcknowledged: 14 })) {
  Deno.test(test);
}

// Cell 4's power-loss check can fail: a rewind that re-inserts the kept prefix is no state
// any prefix of the steps leaves, in every power-loss state.
Deno.test({
  name: "mutant rewind_reinsert_prefix: caught by the power-loss cell 4",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const target = new URL("../testdata/mutants/rewind_reinsert_prefix.ts", import.meta.url);
    const [outcome, ...rest] = await runDefinitions(
      await powerLossForkCell({
        target,
        ...small,
        minAcknowledged: 14,
        kills: ["random"],
        keepEvidence: false,
      }),
    );
    ok(outcome && rest.length === 0, "one cell");
    if (outcome.status === "SKIP") {
      // Every SQLite honours the default leg (CI's): a SKIP there is a failure, not a pass.
      ok(currentLeg().name !== "default", `the default leg was skipped: ${outcome.detail}`);
      console.log(`  SKIP (leg not applicable): ${outcome.detail}`);
      return;
    }
    ok(outcome.status === "FAIL", "the power-loss cell 4 passed on rewind_reinsert_prefix");
    ok(
      /is stored \d+ times \(ids [\d, ]+\): a rewind re-inserted the kept prefix/.test(
        outcome.detail ?? "",
      ),
      outcome.detail,
    );
    console.log(`  caught: ${outcome.detail?.split("\n")[0]}`);
  },
});

for (const mutant of ["sync_off", "delete_full"]) {
  Deno.test({
    name: `mutant ${mutant}: caught by the power-loss tier, GREEN under SIGKILL`,
    sanitizeResources: false,
    sanitizeOps: false,
    async fn() {
      const target = new URL(`../testdata/mutants/${mutant}.ts`, import.meta.url);
      // The acknowledgement-instant kill: the moment DELETE+FULL's unsynced unlink shows.
      const powerLoss = await runDefinitions(
        await powerLossPrefixCell({ target, ...small, kills: ["ack"], keepEvidence: false }),
      );
      const sigkill = await runDefinitions(
        await prefixDurabilityCell({ target, minAcknowledged: 20, rounds: 2, keepEvidence: false }),
      );
      for (const outcome of [...powerLoss, ...sigkill]) {
        if (outcome.status === "SKIP") {
          ok(currentLeg().name !== "default", `the default leg was skipped: ${outcome.detail}`);
          console.log(`  SKIP (leg not applicable): ${outcome.detail}`);
          return;
        }
      }
      for (const outcome of powerLoss) {
        ok(outcome.status === "FAIL", `the power-loss tier passed on ${mutant}: it cannot fail`);
        ok(
          /nothing acknowledged lost in any power-loss state/.test(outcome.detail ?? ""),
          `caught for another reason: ${outcome.detail}`,
        );
        if (mutant === "delete_full") {
          // The known pattern says why and what to change, each on its own line.
          ok(
            /\ndiagnosis delete-full-power-loss: .*journal/.test(outcome.detail ?? ""),
            outcome.detail,
          );
          ok(/; fix: PRAGMA synchronous = EXTRA/.test(outcome.detail ?? ""), outcome.detail);
        }
        console.log(`  power loss caught it: ${outcome.detail?.split("\n")[0]}`);
      }
      for (const outcome of sigkill) {
        ok(outcome.status === "PASS", `SIGKILL cell 1 failed on ${mutant}: ${outcome.detail}`);
      }
      console.log(`  SIGKILL cell 1: GREEN`);
    },
  });
}

// The torn last writes: a JSON-lines store that cannot open a torn last line is caught on
// every run, and only because they are enumerated; the correct one passes with them judged.
Deno.test({
  name:
    "power-loss cell 1: a torn last line the store cannot open is caught by the enumerated torn writes",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const mutant = new URL("../testdata/mutants/jsonl_torn_tail_intolerant.ts", import.meta.url);
    const correct = new URL("../testdata/jsonl_store/target.ts", import.meta.url);
    const options = { ...small, kills: ["ack"] as const, keepEvidence: false };
    for (const seed of [1, 2]) {
      const [caught] = await runDefinitions(
        await powerLossPrefixCell({ target: mutant, ...options, seed }),
      );
      ok(
        caught?.status === "FAIL",
        `seed ${seed}: the torn tail was not caught: ${caught?.detail}`,
      );
      ok(/: torn store\.db #\d+ at \d+ /.test(caught.detail ?? ""), caught.detail);
      console.log(`  caught (seed ${seed}): ${caught.detail?.split("\n")[1]}`);
    }
    const [untorn] = await runDefinitions(
      await powerLossPrefixCell({ target: mutant, ...options, seed: 1, tornLast: false }),
    );
    ok(untorn?.status === "PASS", `without the torn writes it is caught anyway: ${untorn?.detail}`);
    const [green] = await runDefinitions(
      await powerLossPrefixCell({ target: correct, ...options, seed: 1 }),
    );
    ok(green?.status === "PASS", `the correct JSON-lines store failed: ${green?.detail}`);
  },
});

// Resume after recovery: a store whose first append after recovery reuses a stale id reads
// its recovered state right; only the second life shows it (every run).
Deno.test({
  name: "power-loss cell 1: a second life on a recovered state catches a stale next id",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const target = new URL("../testdata/mutants/resume_stale_next_id.ts", import.meta.url);
    for (const seed of [1, 2]) {
      const [outcome] = await runDefinitions(
        await powerLossPrefixCell({ target, ...small, kills: ["ack"], keepEvidence: false, seed }),
      );
      ok(outcome?.status === "FAIL", `seed ${seed}: a stale next id passed: ${outcome?.detail}`);
      ok(
        /^ack kill: a fresh process continues \d+ of \d+ recovered states and both lives' appends hold: \d+ of \d+ continued states failed/
          .test(outcome.detail ?? ""),
        `caught for another reason: ${outcome.detail}`,
      );
      console.log(`  caught (seed ${seed}): ${outcome.detail?.slice(0, 160)}`);
    }
  },
});

// What the tier counts on the reference store: states, torn last writes, second lives.
Deno.test({
  name: "power-loss cells 1, 3, 4 on the reference store: torn writes and second lives judged",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const leg = currentLeg();
    const target = reference.href;
    const runs = [
      await powerLossPrefixRun({ ...small, leg, target, dir: testFolder(), kill: "ack" }),
      await powerLossRotationRun({
        ...small,
        minAcknowledged: 5,
        leg,
        target,
        dir: testFolder(),
        kill: "random",
      }),
      await powerLossForkRun({
        ...small,
        minAcknowledged: 14,
        leg,
        target,
        dir: testFolder(),
        kill: "random",
      }),
    ];
    for (const run of runs) {
      ok(run.losingStates === 0 && run.corruptStates === 0, `${run.firstLoss} ${run.firstProblem}`);
      ok(run.torn.states > 0 && run.torn.tearable > 0, JSON.stringify(run.torn));
      ok(run.resumes.run > 0 && run.resumes.failed === 0, JSON.stringify(run.resumes));
    }
  },
});

// A correct store whose run the recorder cannot follow (a copy made in the kernel) is an
// ERROR of the suite, never a FAIL of the store.
Deno.test({
  name: "a correct store the recorder cannot follow: ERROR, never FAIL",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const target = new URL("../testdata/notice_copy_target.ts", import.meta.url);
    const [outcome, ...rest] = await runDefinitions(
      await powerLossPrefixCell({ target, ...small, kills: ["ack"], keepEvidence: false }),
    );
    ok(outcome && rest.length === 0, "one cell");
    if (outcome.status === "SKIP") {
      ok(currentLeg().name !== "default", `the default leg was skipped: ${outcome.detail}`);
      return;
    }
    ok(outcome.status === "ERROR", `${outcome.status}: ${outcome.detail}`);
    ok(/copy_file_range \(a copy made in the kernel/.test(outcome.detail ?? ""), outcome.detail);
  },
});

// A store whose log is opened O_DSYNC makes no sync call: each write is durable when it
// returns, and a power loss during one finds it pending. Correct, it passes with its states
// judged, as does a snapshot replaced by rename; writes split between a plain handle and
// the O_DSYNC one are more than the model follows (an ERROR of the suite, never a FAIL).
Deno.test({
  name:
    "power-loss cell 1: synchronous (O_DSYNC) writes are durable when they return, a rename once its folder is synced",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const options = { ...small, kills: ["ack"] as const, keepEvidence: false, seed: 1 };
    const correct = new URL("../testdata/jsonl_store/dsync_target.ts", import.meta.url);
    const [green, ...rest] = await runDefinitions(
      await powerLossPrefixCell({ target: correct, ...options }),
    );
    ok(green && rest.length === 0, "one cell");
    if (green.status === "SKIP") {
      ok(currentLeg().name !== "default", `the default leg was skipped: ${green.detail}`);
      return;
    }
    ok(green.status === "PASS", `the O_DSYNC store failed: ${green.detail}`);
    const run = await powerLossPrefixRun({
      ...small,
      leg: currentLeg(),
      target: correct.href,
      dir: testFolder(),
      kill: "ack",
    });
    ok(
      run.statesJudged > 0 && run.torn.states > 0,
      `${run.statesJudged} judged, ${run.torn.states} torn`,
    );
    ok(run.losingStates === 0 && run.corruptStates === 0, `${run.firstLoss} ${run.firstProblem}`);
    // A snapshot replaced by rename: durable through its names, judged the same way.
    const renaming = new URL("../testdata/snapshot_store/target.ts", import.meta.url);
    const [renamed] = await runDefinitions(
      await powerLossPrefixCell({ target: renaming, ...options }),
    );
    ok(renamed?.status === "PASS", `the snapshot store failed: ${renamed?.detail}`);
    const split = new URL("../testdata/jsonl_store/mixed_sync_target.ts", import.meta.url);
    const [unjudged] = await runDefinitions(
      await powerLossPrefixCell({ target: split, ...options }),
    );
    ok(unjudged?.status === "ERROR", `${unjudged?.status}: ${unjudged?.detail}`);
    ok(
      /is a synchronous write .* while record \d+ left/.test(unjudged.detail ?? ""),
      unjudged.detail,
    );
  },
});
