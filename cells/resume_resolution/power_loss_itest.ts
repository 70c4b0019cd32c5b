// The power-loss cell 8 on this process's leg: the reference store passes; a store whose
// rotations commit with synchronous=OFF (rotation_sync_off), GREEN under SIGKILL, loses
// acknowledged rotations in the power-loss states: their chains resolve to the parent again.
import { ok } from "node:assert/strict";
import { currentLeg } from "../../harness/legs.ts";
import { powerLossResolutionCell } from "./power_loss.ts";
import { runDefinitions } from "../engine/run_definitions.ts";
import { mutantTarget } from "../testdata/mutants/catalogue.ts";
import { RESUME_RESOLUTION_TIER_MUTANTS } from "../testdata/mutants/catalogue_resume_resolution.ts";

const small = { minAcknowledged: 7, subsets: 6, instants: 12, keepEvidence: false };
// A lost rotation shows only between its acknowledgement and the next append's sync: every
// sync point of the mutant's runs is judged.
const whole = { minAcknowledged: 7, subsets: 4, keepEvidence: false };
const caught = RESUME_RESOLUTION_TIER_MUTANTS.map((m) => ({
  target: mutantTarget(m.name),
  expect: m.tiers["powerloss-cells"]!,
  options: whole,
}));
const cases = [
  {
    target: new URL("../reference_target.ts", import.meta.url),
    expect: "PASS" as const,
    options: small,
  },
  ...caught,
];

for (const { target, expect, options } of cases) {
  Deno.test({
    name: `power-loss cell 8 on ${target.pathname.split("/").at(-1)}: ${
      expect === "PASS" ? "passes" : "caught"
    }`,
    sanitizeResources: false,
    sanitizeOps: false,
    async fn() {
      const [outcome] = await runDefinitions(await powerLossResolutionCell({ target, ...options }));
      if (outcome?.status === "SKIP") {
        ok(currentLeg().name !== "default", `the default leg was skipped: ${outcome.detail}`);
        return;
      }
      if (expect === "PASS") {
        ok(outcome?.status === "PASS", outcome?.detail);
        return;
      }
      ok(outcome?.status === "FAIL", "the power-loss cell 8 passed");
      ok(expect.test(outcome.detail ?? ""), `caught for another reason: ${outcome.detail}`);
    },
  });
}
