// F2 on the reference store on every leg, on the JSON-lines store, and on its mutants.
import { strictEqual } from "node:assert/strict";
import { LEGS } from "../../harness/legs.ts";
import { corruptionClause } from "./corruption.ts";
import { cellsTarget, ITEST, runOn, shown, skippedLeg, testCatches } from "./_itest_support.ts";

for (const leg of LEGS) {
  Deno.test({
    name: `F2 on the reference store, leg ${leg}: every damage refused, no append acknowledged`,
    ...ITEST,
    async fn() {
      const verdict = await runOn(corruptionClause, cellsTarget("reference_target.ts"), leg);
      if (skippedLeg(verdict, leg)) return;
      const outcomes = verdict.figures?.outcomes as Record<string, string>;
      strictEqual(outcomes.truncation, "open threw SessionDBOpenError", shown(verdict));
      strictEqual(outcomes.header, "open threw SessionDBOpenError", shown(verdict));
      strictEqual(verdict.judged, 3, shown(verdict));
      strictEqual(verdict.status, "PASS", shown(verdict));
    },
  });
}

Deno.test({
  name: "F2 on the JSON-lines store: its damaged record refused at open with a typed error",
  ...ITEST,
  async fn() {
    const verdict = await runOn(
      corruptionClause,
      cellsTarget("testdata/jsonl_store/target.ts"),
      "default",
    );
    strictEqual(verdict.status, "PASS", shown(verdict));
  },
});

testCatches("F2", (target, leg) => runOn(corruptionClause, target, leg));
