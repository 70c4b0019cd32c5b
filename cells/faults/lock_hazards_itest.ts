// F3 on the reference store (PASS on every leg: a long-lived writer beside a process that
// reopens the store) and on its mutants (FAIL naming a close that drops the process's locks, with
// the catalogue's check). Run it again with DENO_SQLITE_PATH set for the other library.
import { match, ok, strictEqual } from "node:assert/strict";
import { LEGS } from "../../harness/legs.ts";
import { FAULT_MUTANTS } from "../testdata/mutants/catalogue_faults.ts";
import { lockHazardsClause } from "./lock_hazards.ts";
import { cellsTarget, ITEST, runHazardClause, shown } from "./_hazard_itest_support.ts";

for (const leg of LEGS) {
  Deno.test({
    name: `F3 passes the reference store, leg ${leg}`,
    ...ITEST,
    async fn() {
      const target = cellsTarget("reference_target.ts");
      const verdict = await runHazardClause(lockHazardsClause, target, leg);
      strictEqual(verdict.status, "PASS", shown(verdict));
      ok(verdict.judged > 0);
    },
  });
}

for (const mutant of FAULT_MUTANTS.filter((m) => m.clause === "F3")) {
  for (const leg of mutant.legs ?? LEGS) {
    Deno.test({
      name: `F3 catches ${mutant.name} (${mutant.breaks}), leg ${leg}`,
      ...ITEST,
      async fn() {
        const target = cellsTarget(`testdata/mutants/${mutant.name}.ts`);
        const verdict = await runHazardClause(lockHazardsClause, target, leg);
        if (mutant.clause === "F3" && verdict.figures?.journalMode !== "wal") {
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
