// The power-loss tier on the reference store (current leg; cells 1, 3 and 4), and the reason the tier
// exists: stores with synchronous=OFF, and in DELETE mode with FULL, are caught by it while
// the SIGKILL cell stays GREEN on them. Small runs here; `deno task powerloss` is the big one.
import { currentLeg } from "../harness/legs.ts";
import { ok } from "node:assert/strict";
import { powerLossForkCell } from "./power_loss_fork_determinism.ts";
import { powerLossPrefixCell } from "./power_loss_prefix_durability.ts";
import { powerLossRotationCell } from "./power_loss_rotation_atomicity.ts";
import { prefixDurabilityCell } from "./prefix_durability.ts";
import { runDefinitions } from "./run_definitions.ts";

const reference = new URL("./reference_target.ts", import.meta.url);
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
    const target = new URL("./testdata/mutants/rewind_reinsert_prefix.ts", import.meta.url);
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
      const target = new URL(`./testdata/mutants/${mutant}.ts`, import.meta.url);
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
        console.log(`  power loss caught it: ${outcome.detail?.split("\n")[0]}`);
      }
      for (const outcome of sigkill) {
        ok(outcome.status === "PASS", `SIGKILL cell 1 failed on ${mutant}: ${outcome.detail}`);
      }
      console.log(`  SIGKILL cell 1: GREEN`);
    },
  });
}
