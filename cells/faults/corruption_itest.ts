// F2 on the reference store on every leg, on the JSON-lines store, and on its mutants.
import { ok, strictEqual } from "node:assert/strict";
import { LEGS } from "../../harness/legs.ts";
import { FAULT_MUTANTS } from "../testdata/mutants/catalogue_faults.ts";
import { corruptionClause } from "./corruption.ts";
import { cellsTarget, ITEST, runOn, shown, skippedLeg } from "./_itest_support.ts";

// A finding, not an expectation of the clause: the reference refuses the read of a session
// whose page is damaged (SessionDBStorageError) but then acknowledges appends to it, which
// a third life cannot read. Truncation and a foreign header it refuses at open. When the
// reference is fixed, this test fails: make it expect PASS.
const REFERENCE_FINDING =
  /^page damage \(.*\): the second life acknowledged 2 append\(s\) \(ids 31, 32\) it cannot keep: a third life's read threw SessionDBStorageError: .*database disk image is malformed/;

for (const leg of LEGS) {
  Deno.test({
    name: `F2 on the reference store, leg ${leg}: truncation and header refused at open`,
    ...ITEST,
    async fn() {
      const verdict = await runOn(corruptionClause, cellsTarget("reference_target.ts"), leg);
      if (skippedLeg(verdict, leg)) return;
      const outcomes = verdict.figures?.outcomes as Record<string, string>;
      strictEqual(outcomes.truncation, "open threw SessionDBOpenError", shown(verdict));
      strictEqual(outcomes.header, "open threw SessionDBOpenError", shown(verdict));
      strictEqual(verdict.judged, 3, shown(verdict));
      strictEqual(verdict.status, "FAIL", `the reference finding changed: ${shown(verdict)}`);
      strictEqual(verdict.checks?.length, 1, shown(verdict));
      ok(REFERENCE_FINDING.test(verdict.checks[0]!), shown(verdict));
    },
  });
}

Deno.test({
  name: "F2 on the JSON-lines store: its damaged record refused at open, but untyped",
  ...ITEST,
  async fn() {
    const verdict = await runOn(
      corruptionClause,
      cellsTarget("testdata/jsonl_store/target.ts"),
      "default",
    );
    // A finding: the store refuses the damaged record with a plain Error.
    strictEqual(verdict.status, "FAIL", shown(verdict));
    strictEqual(verdict.checks?.length, 1, shown(verdict));
    ok(
      /^middle record damage \(.*\): the open threw Error: .*line \d+ is corrupt, not a typed error$/
        .test(verdict.checks[0]!),
      shown(verdict),
    );
  },
});

for (const mutant of FAULT_MUTANTS.filter((m) => m.clause === "F2")) {
  for (const leg of mutant.legs ?? LEGS) {
    Deno.test({
      name: `F2 catches ${mutant.name} (${mutant.breaks}), leg ${leg}`,
      ...ITEST,
      async fn() {
        const target = cellsTarget(`testdata/mutants/${mutant.name}.ts`);
        const verdict = await runOn(corruptionClause, target, leg);
        if (skippedLeg(verdict, leg)) return;
        strictEqual(verdict.status, "FAIL", shown(verdict));
        ok(verdict.checks?.some((check) => mutant.check.test(check)), shown(verdict));
      },
    });
  }
}
