// The fault clauses judge stores laid out unlike SQLite: one that makes its path a folder
// of its own files (a LevelDB-like layout) passes F1, F2, F4 and F5, and one that keeps its log
// in the path's folder under a name of its own passes the clauses that copy, damage or read
// its files, and one that refuses a folder holding files not its own passes F5; each
// judged, never skipped.
import { ok, strictEqual } from "node:assert/strict";
import { corruptionClause } from "./corruption.ts";
import { injectedErrorsClause } from "./injected_errors.ts";
import { pulledFilesClause } from "./pulled_files.ts";
import { shortLivedClause } from "./short_lived.ts";
import { cellsTarget, ITEST, runOn, shown } from "./_itest_support.ts";
import type { FaultClause } from "./types.ts";

const LAYOUTS: { store: string; target: string; clauses: FaultClause[] }[] = [
  {
    store: "a store whose path is a folder",
    target: cellsTarget("testdata/folder_store/target.ts"),
    // F3 reads the folder as F4 does (its hold, 10 s of waiting, is judged on the log store).
    clauses: [injectedErrorsClause, corruptionClause, pulledFilesClause, shortLivedClause],
  },
  {
    store: "a store whose log is named its own way",
    target: cellsTarget("testdata/jsonl_store/sibling_target.ts"),
    clauses: [injectedErrorsClause, corruptionClause, shortLivedClause],
  },
  {
    // F5 kept its journals in the store's folder, and a store that could not open there
    // was SKIPPED on the journal-mode legs as not applicable.
    store: "a store that refuses files not its own in its folder",
    target: cellsTarget("testdata/own_folder_target.ts"),
    clauses: [shortLivedClause],
  },
];

for (const { store, target, clauses } of LAYOUTS) {
  for (const clause of clauses) {
    Deno.test({
      name: `${clause.id} passes ${store}`,
      ...ITEST,
      async fn() {
        const verdict = await runOn(clause, target, "default");
        strictEqual(verdict.status, "PASS", shown(verdict));
        ok(verdict.judged > 0, shown(verdict));
      },
    });
  }
}
