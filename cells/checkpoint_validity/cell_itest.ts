// Cell 13 against the reference store, on the leg of this process
// (SESSION_DB_JOURNAL_MODE and DENO_SQLITE_PATH).
import { ok, strictEqual } from "node:assert/strict";
import { currentLeg } from "../../harness/legs.ts";
import { runDefinitions } from "../engine/run_definitions.ts";
import { checkpointValidityCell } from "./cell.ts";

const target = new URL("../reference_target.ts", import.meta.url);
for (const test of await checkpointValidityCell({ target })) Deno.test(test);

const options = { sanitizeResources: false, sanitizeOps: false };

/** Cell 13 on the default leg against the test target `path`, its outcome. */
async function judged(path: string) {
  const definitions = await checkpointValidityCell({
    target: new URL(`../testdata/${path}.ts`, import.meta.url),
    leg: { ...currentLeg(), name: "default" },
    keepEvidence: false,
  });
  return (await runDefinitions(definitions))[0];
}

// A plantViolation answering as SQLite's changes() does (1 planted, 0 not): before `1` was
// read as "the store cannot hold it", nothing on disk was judged, and a store serving a
// planted state as whole passed.
Deno.test({
  name: "cell 13 judges the violations a plantViolation answering 1 planted",
  ...options,
  async fn() {
    const correct = await judged("planted_as_integer_target");
    strictEqual(correct?.status, "PASS", correct?.detail);
    const blind = await judged("faulty/blind_planted_as_integer");
    strictEqual(blind?.status, "FAIL", blind?.detail);
    ok(/^orphan-message: refused when found on disk/.test(blind?.detail ?? ""), blind?.detail);
  },
});

Deno.test({
  name: "cell 13 FAILs a plantViolation that answers nothing, naming the answer",
  ...options,
  async fn() {
    const outcome = await judged("planted_answers_nothing_target");
    strictEqual(outcome?.status, "FAIL", outcome?.detail);
    ok(
      /plantViolation\(orphan-message\) answered undefined, not true/.test(outcome?.detail ?? ""),
      outcome?.detail,
    );
  },
});
