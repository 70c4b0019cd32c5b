// Every fault clause judges a store that makes its path a folder of its own files (a
// LevelDB-like layout): correct, it passes each, judged, never skipped.
import { ok, strictEqual } from "node:assert/strict";
import { corruptionClause } from "./corruption.ts";
import { injectedErrorsClause } from "./injected_errors.ts";
import { lockHazardsClause } from "./lock_hazards.ts";
import { pulledFilesClause } from "./pulled_files.ts";
import { shortLivedClause } from "./short_lived.ts";
import { cellsTarget, ITEST, runOn, shown } from "./_itest_support.ts";

const FOLDER_STORE = cellsTarget("testdata/folder_store/target.ts");

for (
  const clause of [
    injectedErrorsClause,
    corruptionClause,
    lockHazardsClause,
    pulledFilesClause,
    shortLivedClause,
  ]
) {
  Deno.test({
    name: `${clause.id} passes a store whose path is a folder`,
    ...ITEST,
    async fn() {
      const verdict = await runOn(clause, FOLDER_STORE, "default");
      strictEqual(verdict.status, "PASS", shown(verdict));
      ok(verdict.judged > 0, shown(verdict));
    },
  });
}
