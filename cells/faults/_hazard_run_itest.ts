// F3 and F4's run on peers whose writes another process makes or which refuse a second
// writer: the hold continues the process the recorder stopped (a Python worker, the
// grandchild of the store process), and a refusal under contention is named as one.
import { fail, match, ok, strictEqual } from "node:assert/strict";
import { childPermissions } from "../../targets/python_sqlite3/target.ts";
import { lockHazardsClause } from "./lock_hazards.ts";
import { pulledFilesClause } from "./pulled_files.ts";
import { ITEST, runOn, shown } from "./_itest_support.ts";

const peer = (path: string) => new URL(`../../targets/${path}`, import.meta.url).href;
const hasPython = childPermissions().run?.[0]?.startsWith("/") ?? false;

for (const clause of [lockHazardsClause, pulledFilesClause]) {
  Deno.test({
    name: `${clause.id} holds and continues a worker store's writer (Python), leg default`,
    ignore: !hasPython,
    ...ITEST,
    async fn() {
      const verdict = await runOn(clause, peer("python_sqlite3/target.ts"), "default");
      strictEqual(verdict.status, "PASS", shown(verdict));
      ok(verdict.judged > 0);
    },
  });

  // Deno KV retries a busy commit a little before it throws, so a run whose collisions
  // all clear within those retries passes (its manifest says INTERMITTENT): the refusal
  // must be named within three runs, and a run without one must be a clean PASS.
  Deno.test({
    name: `${clause.id} names Deno KV's untyped refusal of a second writer, leg default`,
    ...ITEST,
    async fn() {
      const passes: string[] = [];
      for (let run = 0; run < 3; run++) {
        const verdict = await runOn(clause, peer("deno_kv.ts"), "default");
        if (verdict.status === "FAIL") {
          match(
            verdict.reason ?? "",
            /^process [AB] \([a-z-]+\) threw TypeError while process [AB] wrote the same store, where only an error named BusyDeadlineError may refuse a write: database is locked$/,
          );
          return;
        }
        strictEqual(verdict.status, "PASS", shown(verdict));
        strictEqual(verdict.figures?.hazards, 0, shown(verdict));
        passes.push(shown(verdict));
      }
      fail(`three runs never named the refusal:\n${passes.join("\n")}`);
    },
  });
}
