// The deeper tiers' mutants (`TIER_MUTANTS` in the catalogue): each is caught by every
// tier meant to catch it, for the intended reason, on the default leg; the SIGKILL sweep
// and cells cannot see them by design. Skipped (said out loud) without the recorder.
import { ok } from "node:assert/strict";
import { platformSkipReason } from "../../recorder/build.ts";
import { sqliteLibraryPath } from "../../session_db/sqlite/database.ts";
import { mutantTarget, TIER_MUTANTS } from "../../cells/testdata/mutants/catalogue.ts";
import { powerLossCellsTier, sweepTier, type TierOptions } from "./tier.ts";
import { testFolder } from "../../internal/_test_folder.ts";

const skip = platformSkipReason();

for (const mutant of TIER_MUTANTS) {
  for (const [tier, clause] of Object.entries(mutant.tiers)) {
    Deno.test({
      name: `mutant ${mutant.name} (${mutant.breaks}) is caught by ${tier}${
        skip ? ` SKIP: ${skip}` : ""
      }`,
      ignore: skip !== undefined,
      sanitizeResources: false,
      sanitizeOps: false,
      async fn() {
        const options: TierOptions = {
          target: mutantTarget(mutant.name).href,
          legs: ["default"],
          libraries: [{ label: "system", path: sqliteLibraryPath() }],
          quick: true,
          evidenceDir: testFolder({ prefix: "tier-mutant-" }),
          seed: 2,
          cells: [mutant.cell ?? 1],
        };
        const outcome = tier === "powerloss-cells"
          ? await powerLossCellsTier({ ...options, powerLoss: { instants: mutant.instants ?? 10 } })
          : await sweepTier({
            ...options,
            tier: tier as "syscalls-crash" | "syscalls-power-loss",
            calls: { programs: ["append+append"], kills: 0 },
          });
        const [cell1] = outcome.results;
        ok(cell1?.status === "FAIL", `${tier} passed ${mutant.name}: ${JSON.stringify(cell1)}`);
        const checks = (cell1.checks ?? []).join("\n");
        ok(clause!.test(checks), `caught for another reason:\n${checks}`);
        console.log(`  caught: ${checks.split("\n").find((c) => clause!.test(c))?.slice(0, 160)}`);
      },
    });
  }
}
