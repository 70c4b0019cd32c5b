// F5 on the reference store on every leg, on the JSON-lines store, and on its mutants.
import { ok, strictEqual } from "node:assert/strict";
import { LEGS } from "../../harness/legs.ts";
import { FAULT_MUTANTS } from "../testdata/mutants/catalogue_faults.ts";
import { shortLivedClause } from "./short_lived.ts";
import { cellsTarget, ITEST, runOn, shown, skippedLeg } from "./_itest_support.ts";

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

for (const mutant of FAULT_MUTANTS.filter((m) => m.clause === "F5")) {
  for (const leg of mutant.legs ?? LEGS) {
    Deno.test({
      name: `F5 catches ${mutant.name} (${mutant.breaks}), leg ${leg}`,
      ...ITEST,
      async fn() {
        const target = cellsTarget(`testdata/mutants/${mutant.name}.ts`);
        const verdict = await runOn(shortLivedClause, target, leg);
        if (skippedLeg(verdict, leg)) return;
        strictEqual(verdict.status, "FAIL", shown(verdict));
        ok(verdict.checks?.some((check) => mutant.check.test(check)), shown(verdict));
      },
    });
  }
}
