// Cell 5 against the stores it must fail, on this process's leg: a store keeping the
// origin's delivery policy declared as ours and the other way round (each fails under the
// policy it does not keep), and a sweep that claims without its compare-and-swap, caught
// by the forced worst case every run. The reference store passes under both policies in
// cells_test.ts; `deno task mutants` runs every policy mutant on every leg.
import { ok } from "node:assert/strict";
import { currentLeg } from "../../harness/legs.ts";
import { outboxExactlyOnceCell } from "./cell.ts";
import { runDefinitions } from "../engine/run_definitions.ts";
import { MUTANTS, mutantTarget } from "../testdata/mutants/catalogue.ts";
import { generateMutants } from "../testdata/mutants/generated.ts";
import { defineCell } from "../engine/cell.ts";
import { outboxStops } from "./stops.ts";
import { loadTarget } from "../contract/target.ts";

for (
  const name of ["amo_declared_keeps_marked", "marked_drops_maybe_sent", "amo_sweep_without_cas"]
) {
  const mutant = MUTANTS.find((m) => m.name === name)!;
  Deno.test({
    name: `cell 5 catches ${name} (${mutant.breaks})`,
    sanitizeResources: false,
    sanitizeOps: false,
    async fn() {
      const [outcome] = await runDefinitions(
        await outboxExactlyOnceCell({
          target: mutantTarget(name),
          transports: "one",
          keepEvidence: false,
        }),
      );
      if (outcome?.status === "SKIP") {
        ok(currentLeg().name !== "default", `the default leg was skipped: ${outcome.detail}`);
        return;
      }
      ok(outcome?.status === "FAIL", `cell 5 passed on ${name}`);
      ok(mutant.clause.test(outcome.detail ?? ""), `caught for another reason: ${outcome.detail}`);
      console.log(`  caught: ${outcome.detail?.split("\n")[0]}`);
    },
  });
}

// A store keeping the origin's policy and declaring nothing (no policy, no crash point) is
// judged under the policy its sweep implies, and passes: judged under ours it would fail.
Deno.test({
  name: "cell 5 passes the origin's policy undeclared, judged under the policy its sweep implies",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const [outcome] = await runDefinitions(
      await outboxExactlyOnceCell({
        target: new URL("../testdata/marked_unpointed_target.ts", import.meta.url),
        transports: "one",
        keepEvidence: false,
      }),
    );
    if (outcome?.status === "SKIP") {
      ok(currentLeg().name !== "default", `the default leg was skipped: ${outcome.detail}`);
      return;
    }
    ok(outcome?.status === "PASS", outcome?.detail);
  },
});

// The stops inside the guarded writes (on with the race series, as in the matrix and the
// mutants task): a sweep, an attempt and a delivery mark that check their guard in a
// transaction of their own before writing (generated mutants, no crash point in the method
// they change) are each caught by a stop between the check and the write, every run.
const CHECK_THEN_ACT = [
  "check-then-act:sweepRecoverable",
  "check-then-act:sweepRecoverable:outbox#2.state",
  "check-then-act:markAttempting:state",
  "check-then-act:markDelivered:delivery_fence",
];
Deno.test({
  name: "cell 5's stops catch a sweep, an attempt and a delivery mark checked before they write",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const set = await generateMutants((id) => CHECK_THEN_ACT.includes(id));
    const outcomes = await Promise.all(CHECK_THEN_ACT.map(async (id) => {
      const mutant = set.mutants.find((m) => m.id === id)!;
      // The stops alone, as cell 5 runs them: the cell's other checks may catch a mutant
      // too, by a race that happened to land, and end the cell before its stops.
      const listed = new Set((await loadTarget(mutant.target)).crashPoints?.() ?? []);
      const [outcome] = await runDefinitions(
        await defineCell({
          id: 5,
          title: "delivery outbox stops",
          preloads: true,
          run: (ctx, t) => outboxStops(ctx, t, listed),
        }, { target: mutant.target, keepEvidence: false }),
      );
      return [id, outcome] as const;
    }));
    for (const [id, outcome] of outcomes) {
      if (outcome?.status === "SKIP") {
        ok(currentLeg().name !== "default", `the default leg was skipped: ${outcome.detail}`);
        continue;
      }
      ok(outcome?.status === "FAIL", `cell 5's stops passed ${id}: ${outcome?.status}`);
      const stop = outcome.checks?.find((check) => /stopped at lock call \d+/.test(check));
      ok(stop, `${id}: no stop caught it: ${outcome.checks?.join("; ") ?? outcome.detail}`);
      console.log(`  ${id} caught: ${stop.slice(0, 160)}`);
    }
  },
});
