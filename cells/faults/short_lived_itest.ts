// F5 on the reference store on every leg, on the JSON-lines store, on a store that cannot
// open, and on its mutants.
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

// A store that cannot open has no file to audit: it FAILs on every leg, never SKIPs as not
// applicable to it.
Deno.test({
  name: "F5 fails a store that cannot open, on a journal-mode leg too",
  ...ITEST,
  async fn() {
    const target = cellsTarget("testdata/faulty/open_throws.ts");
    const verdict = await runOn(shortLivedClause, target, "delete");
    strictEqual(verdict.status, "FAIL", shown(verdict));
    ok(
      /short-0, alone on a new file, .*the file is locked by another program/.test(
        verdict.reason ?? "",
      ),
      shown(verdict),
    );
  },
});

testCatches("F5", (target, leg) => runOn(shortLivedClause, target, leg));
