// The power-loss cell 10 on this process's leg: the reference store passes; a store whose
// ends and reopens commit with synchronous=OFF (end_sync_off), GREEN under SIGKILL, loses
// acknowledged ends and reopens in the power-loss states.
import { ok } from "node:assert/strict";
import { currentLeg } from "../../harness/legs.ts";
import { powerLossEndsCell } from "./power_loss.ts";
import { runDefinitions } from "../engine/run_definitions.ts";
import { mutantTarget } from "../testdata/mutants/catalogue.ts";
import { ENDS_AND_REOPENS_TIER_MUTANTS } from "../testdata/mutants/catalogue_ends_and_reopens.ts";

const small = { minAcknowledged: 4, subsets: 6, instants: 12, keepEvidence: false };
const caught = ENDS_AND_REOPENS_TIER_MUTANTS.map((m) => ({
  target: mutantTarget(m.name),
  expect: m.tiers["powerloss-cells"]!,
}));
const cases = [
  { target: new URL("../reference_target.ts", import.meta.url), expect: "PASS" as const },
  ...caught,
];

for (const { target, expect } of cases) {
  Deno.test({
    name: `power-loss cell 10 on ${target.pathname.split("/").at(-1)}: ${
      expect === "PASS" ? "passes" : "caught"
    }`,
    sanitizeResources: false,
    sanitizeOps: false,
    async fn() {
      const [outcome] = await runDefinitions(await powerLossEndsCell({ target, ...small }));
      if (outcome?.status === "SKIP") {
        ok(currentLeg().name !== "default", `the default leg was skipped: ${outcome.detail}`);
        return;
      }
      if (expect === "PASS") {
        ok(outcome?.status === "PASS", outcome?.detail);
        return;
      }
      ok(outcome?.status === "FAIL", "the power-loss cell 10 passed");
      ok(expect.test(outcome.detail ?? ""), `caught for another reason: ${outcome.detail}`);
    },
  });
}
