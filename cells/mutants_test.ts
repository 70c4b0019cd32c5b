// Each cell goes RED against a store that breaks its clause, and stays GREEN on the
// reference store (cells_test.ts).
import { ok } from "node:assert/strict";
import { type CellId, CELLS } from "./register.ts";
import { runDefinitions } from "./_run.ts";

// Each mutant, the cell meant to catch it, and the check that must be the one failing
// (a mutant caught for another reason, say it did not open, proves nothing).
const MUTANTS: [string, CellId, RegExp][] = [
  ["ack_before_commit", 1, /^nothing acknowledged lost/],
  ["claim_select_then_update", 2, /exactly one winner/],
  ["rotation_two_transactions", 3, /no compression orphan|in-flight rotation/],
  [
    "rewind_reinsert_prefix",
    4,
    /: no prefix row duplicated|: rewound rows stay inactive, kept prefix ids unchanged/,
  ],
  ["resend_attempting_without_key", 5, /non-idempotent: each effect observed at most once/],
];

for (const [mutant, cell, clause] of MUTANTS) {
  Deno.test({
    name: `mutant ${mutant} is caught by cell ${cell}`,
    sanitizeResources: false,
    sanitizeOps: false,
    async fn() {
      const target = new URL(`./testdata/mutants/${mutant}.ts`, import.meta.url);
      const outcomes = await runDefinitions(
        await CELLS[cell]({ target, keepEvidence: false }),
      );
      for (const outcome of outcomes) {
        if (outcome.status === "SKIP") {
          console.log(`  SKIP (leg not applicable): ${outcome.detail}`);
          continue;
        }
        ok(outcome.status === "FAIL", `cell ${cell} passed on mutant ${mutant}: it cannot fail`);
        ok(clause.test(outcome.detail ?? ""), `caught for another reason: ${outcome.detail}`);
        console.log(`  caught: ${outcome.detail?.split("\n")[0]}`);
      }
    },
  });
}
