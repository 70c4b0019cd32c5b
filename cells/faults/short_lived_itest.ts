// F5 on the reference store on every leg, on the JSON-lines store, and on its mutants.
import { ok, strictEqual } from "node:assert/strict";
import { LEGS } from "../../harness/legs.ts";
import { shortLivedClause } from "./short_lived.ts";
import { cellsTarget, ITEST, runOn, shown, skippedLeg, testCatches } from "./_itest_support.ts";

for (const leg of LEGS) {
  Deno.test({
    name: `F5 passes the reference store, leg ${leg}`,
    ...ITEST,
    async fn() {
      const verdict = await runOn(shortLivedClause, cellsTarget("reference_target.ts"), leg);
      if (skippedLeg(verdict, leg)) return;
      strictEqual(verdict.status, "PASS", shown(verdict));
      ok((verdict.figures?.shortProcesses as number) >= 50, shown(verdict));
    },
  });
}

Deno.test({
  name: "F5 passes the JSON-lines store",
  ...ITEST,
  async fn() {
    const target = cellsTarget("testdata/jsonl_store/target.ts");
    const verdict = await runOn(shortLivedClause, target, "default");
    strictEqual(verdict.status, "PASS", shown(verdict));
  },
});

testCatches("F5", (target, leg) => runOn(shortLivedClause, target, leg));
