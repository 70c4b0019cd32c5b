// F1 on the reference store on every leg, on the JSON-lines store, and on its mutants: the
// quick slice (every kind of fault, a stride through its calls), as the tier's --quick runs.
// A store whose calls the recorder cannot see is an ERROR of the suite.
import { ok, strictEqual } from "node:assert/strict";
import { currentLeg, type LegName, LEGS } from "../../harness/legs.ts";
import { buildRecorder } from "../../recorder/build.ts";
import { injectedErrorsClause } from "./injected_errors.ts";
import { cellsTarget, ITEST, runOn, shown, skippedLeg, testCatches } from "./_itest_support.ts";
import { testFolder } from "../../internal/_test_folder.ts";

const built = await buildRecorder();
const f1 = (target: string, leg: LegName) => runOn(injectedErrorsClause, target, leg);

for (const leg of LEGS) {
  Deno.test({
    name: `F1 on the reference store, leg ${leg}: every injected fault judged, none breaks it`,
    ...ITEST,
    ignore: !built.ok,
    async fn() {
      const verdict = await f1(cellsTarget("reference_target.ts"), leg);
      if (skippedLeg(verdict, leg)) return;
      strictEqual(verdict.status, "PASS", shown(verdict));
      // Each kind of fault reached some call (the -wal and -journal ones by leg).
      const figures = verdict.figures as Record<string, number>;
      for (const kind of ["write EIO", "short write", "fsync EIO", "read EIO"]) {
        ok((figures[kind] ?? 0) > 0, `${kind} never injected: ${shown(verdict)}`);
      }
    },
  });
}

Deno.test({
  name: "F1 on the JSON-lines store: typed refusals, nothing acknowledged lost",
  ...ITEST,
  ignore: !built.ok,
  async fn() {
    const verdict = await f1(cellsTarget("testdata/jsonl_store/target.ts"), "default");
    strictEqual(verdict.status, "PASS", shown(verdict));
  },
});

// Refusals of error classes that left `name` as Error's are the store's own, typed.
Deno.test({
  name: "F1 on the JSON-lines store whose error classes keep Error's name: typed refusals",
  ...ITEST,
  ignore: !built.ok,
  async fn() {
    const target = cellsTarget("testdata/jsonl_store/unnamed_errors_target.ts");
    const verdict = await f1(target, "default");
    strictEqual(verdict.status, "PASS", shown(verdict));
  },
});

Deno.test({
  name: "F1 on a store whose calls the recorder cannot see: ERROR, never FAIL",
  ...ITEST,
  ignore: !built.ok,
  async fn() {
    const verdict = await f1(cellsTarget("testdata/jsonl_store/raw_syscall_target.ts"), "default");
    strictEqual(verdict.status, "ERROR", shown(verdict));
    ok(/the recorder missed calls/.test(verdict.reason ?? ""), verdict.reason);
  },
});

Deno.test({
  name: "F1 without the recorder is a SKIP with the reason, never a PASS",
  ...ITEST,
  async fn() {
    const verdict = await injectedErrorsClause.run({
      target: cellsTarget("reference_target.ts"),
      leg: currentLeg(),
      seed: 7,
      quick: true,
      dir: testFolder(),
      recorder: { skip: "the recorder needs cc: install a C compiler" },
    });
    strictEqual(verdict.status, "SKIP");
    strictEqual(verdict.reason, "the recorder needs cc: install a C compiler");
  },
});

testCatches("F1", f1, { ignore: !built.ok });
