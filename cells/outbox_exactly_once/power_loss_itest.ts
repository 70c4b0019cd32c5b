// The power-loss cell 5 on this process's leg: the reference store keeping either delivery
// policy passes; a store whose next life breaks after a recovery (outbox_stale_sequence),
// one judged under the policy it does not keep, and one acknowledging a delivery before it
// is synced (outbox_delivered_unsynced), are caught on the power-loss states.
import { ok } from "node:assert/strict";
import { currentLeg } from "../../harness/legs.ts";
import { powerLossOutboxCell } from "./power_loss.ts";
import { runDefinitions } from "../engine/run_definitions.ts";
import { mutantTarget } from "../testdata/mutants/catalogue.ts";

const cases = [
  { target: new URL("../reference_target.ts", import.meta.url), expect: "PASS" },
  { target: new URL("../testdata/marked_target.ts", import.meta.url), expect: "PASS" },
  {
    target: mutantTarget("outbox_stale_sequence"),
    expect: /new life: its kill landed, its boot exited 0: .*sender: [\s\S]*markAttempting lost/,
  },
  {
    target: mutantTarget("outbox_delivered_unsynced"),
    expect:
      /nothing acknowledged lost in any power-loss state \(\w+\): \d+ acknowledged operations: \d+ of \d+ power-loss states[\s\S]*unsynced-ack-power-loss/,
  },
  {
    target: mutantTarget("amo_declared_keeps_marked"),
    expect: /copies per obligation \(unmarked, marked\) under at-most-once: .*more than once/,
  },
] as const;

for (const { target, expect } of cases) {
  Deno.test({
    name: `power-loss cell 5 on ${target.pathname.split("/").at(-1)}: ${
      expect === "PASS" ? "passes" : "caught"
    }`,
    sanitizeResources: false,
    sanitizeOps: false,
    async fn() {
      const [outcome] = await runDefinitions(
        await powerLossOutboxCell({ target, keepEvidence: false }),
      );
      if (outcome?.status === "SKIP") {
        ok(currentLeg().name !== "default", `the default leg was skipped: ${outcome.detail}`);
        return;
      }
      if (expect === "PASS") {
        ok(outcome?.status === "PASS", outcome?.detail);
        return;
      }
      ok(outcome?.status === "FAIL", "the power-loss cell 5 passed");
      ok(expect.test(outcome.detail ?? ""), `caught for another reason: ${outcome.detail}`);
    },
  });
}
