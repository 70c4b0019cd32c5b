// F3 and F4 on the reference store (PASS on every leg it honours: a long-lived writer beside
// a process that reopens the store) and on their mutants (FAIL naming the call: a close that
// drops the process's locks, an unlink of a file another process has open, with the
// catalogue's check).
import { match, ok, strictEqual } from "node:assert/strict";
import { LEGS } from "../../harness/legs.ts";
import { FAULT_MUTANTS } from "../testdata/mutants/catalogue_faults.ts";
import { lockHazardsClause } from "./lock_hazards.ts";
import { pulledFilesClause } from "./pulled_files.ts";
import { cellsTarget, ITEST, runOn, shown, skippedLeg } from "./_itest_support.ts";

for (const clause of [lockHazardsClause, pulledFilesClause]) {
  for (const leg of LEGS) {
    Deno.test({
      name: `${clause.id} passes the reference store, leg ${leg}`,
      ...ITEST,
      async fn() {
        const verdict = await runOn(clause, cellsTarget("reference_target.ts"), leg);
        if (skippedLeg(verdict, leg)) return;
        strictEqual(verdict.status, "PASS", shown(verdict));
        ok(verdict.judged > 0);
      },
    });
  }

  // A lock wait the recorder cannot see (its blocking flock) must not outlast the hold.
  Deno.test({
    name: `${clause.id} passes the JSON-lines store, whose lock is a blocking flock`,
    ...ITEST,
    async fn() {
      const target = cellsTarget("testdata/jsonl_store/target.ts");
      const verdict = await runOn(clause, target, "default");
      strictEqual(verdict.status, "PASS", shown(verdict));
      ok(verdict.judged > 0);
    },
  });

  for (const mutant of FAULT_MUTANTS.filter((m) => m.clause === clause.id)) {
    for (const leg of mutant.legs ?? LEGS) {
      Deno.test({
        name: `${clause.id} catches ${mutant.name} (${mutant.breaks}), leg ${leg}`,
        ...ITEST,
        async fn() {
          const target = cellsTarget(`testdata/mutants/${mutant.name}.ts`);
          const verdict = await runOn(clause, target, leg);
          if (skippedLeg(verdict, leg)) return;
          if (mutant.harmsIn === "wal" && verdict.figures?.journalMode !== "wal") {
            // A library with the WAL-reset bug keeps the file in DELETE mode on every leg:
            // no lock is held between transactions, so the peek drops none.
            strictEqual(verdict.status, "PASS", shown(verdict));
            return;
          }
          strictEqual(verdict.status, "FAIL", shown(verdict));
          ok(verdict.checks?.some((check) => mutant.check.test(check)), shown(verdict));
          match(verdict.reason ?? "", /^the store's process /);
        },
      });
    }
  }
}
