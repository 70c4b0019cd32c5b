// Each cell goes RED against a store that breaks its clause. Here a sample runs: a planted
// mutant for cell 1, generated ones for cells 2, 3 and 4 (a check-then-act and a resume
// breaker among them),
// and a leg mutant whose leg must SKIP. `deno task mutants` (run by CI) judges every
// planted and generated mutant, for the intended reason, and the correct-but-different
// store (testdata/alt_store/) for false alarms; the reference stays GREEN in cells_test.ts.
import { ok, strictEqual } from "node:assert/strict";
import { currentLeg } from "../harness/legs.ts";
import { CELLS } from "./register.ts";
import { runDefinitions } from "./engine/run_definitions.ts";
import { MUTANTS, mutantTarget } from "./testdata/mutants/catalogue.ts";
import {
  EQUIVALENT,
  FAMILIES,
  FAMILY_FLOOR,
  generateMutants,
} from "./testdata/mutants/generated.ts";

// Deterministic killers, about a second each; the full catalogue belongs to the task.
const PLANTED_SAMPLE = ["ack_before_commit"];
const LEG_SAMPLE = ["resolver_ignores_mode"];
for (const name of [...PLANTED_SAMPLE, ...LEG_SAMPLE]) {
  if (!MUTANTS.some((m) => m.name === name)) throw new Error(`No planted mutant named ${name}`);
}

const options = { sanitizeResources: false, sanitizeOps: false };

// Every sample run starts as the file loads, all at once (each has its own children and
// files, and they mostly wait on them); each test awaits its own run.
function started<T>(run: () => Promise<T>): Promise<T> {
  const promise = run();
  promise.catch(() => {}); // its test reports it
  return promise;
}

for (const mutant of MUTANTS.filter((m) => PLANTED_SAMPLE.includes(m.name))) {
  for (const cell of mutant.cells) {
    const run = started(async () =>
      runDefinitions(
        await CELLS[cell]({
          minAcknowledged: 50, // a shorter prefix than the matrix's: the same catch
          ...mutant.cellOptions,
          target: mutantTarget(mutant.name),
          keepEvidence: false,
        }),
      )
    );
    Deno.test({
      name: `mutant ${mutant.name} (${mutant.breaks}) is caught by cell ${cell}`,
      ...options,
      async fn() {
        const outcomes = await run;
        // A SKIP is never evidence: the intended cell must have run and failed somewhere.
        ok(
          outcomes.some((outcome) => outcome.status === "FAIL"),
          `cell ${cell} never ran on mutant ${mutant.name}: ${
            outcomes.map((o) => `${o.status} ${o.detail ?? ""}`).join("; ")
          }`,
        );
        for (const outcome of outcomes) {
          if (outcome.status === "SKIP") {
            console.log(`  SKIP (leg not applicable): ${outcome.detail}`);
            continue;
          }
          ok(
            outcome.status === "FAIL",
            `cell ${cell} passed on mutant ${mutant.name}: it cannot fail`,
          );
          ok(
            mutant.clause.test(outcome.detail ?? ""),
            `caught for another reason: ${outcome.detail}`,
          );
          console.log(`  caught: ${outcome.detail?.split("\n")[0]}`);
        }
      },
    });
  }
}

for (const mutant of MUTANTS.filter((m) => LEG_SAMPLE.includes(m.name))) {
  Deno.test({
    name:
      `mutant ${mutant.name} (${mutant.breaks}) gets its ${mutant.leg} leg SKIPPED, never PASSED`,
    ...options,
    async fn() {
      const leg = { ...currentLeg(), name: mutant.leg ?? currentLeg().name };
      for (const cell of mutant.cells) {
        // The reference store honours that leg, so the skip is the mutant's doing.
        const reference = await CELLS[cell]({
          target: new URL("./reference_target.ts", import.meta.url),
          leg,
          keepEvidence: false,
        });
        ok(!reference[0]?.ignore, `the reference store is skipped too: ${reference[0]?.name}`);
        const definitions = await CELLS[cell]({
          target: mutantTarget(mutant.name),
          leg,
          keepEvidence: false,
        });
        const [outcome] = await runDefinitions(definitions);
        strictEqual(
          outcome?.status,
          "SKIP",
          `cell ${cell} ran the ${leg.name} leg of ${mutant.name}`,
        );
        strictEqual(definitions[0]?.ignore, true);
        ok(
          mutant.clause.test(outcome.detail ?? ""),
          `skipped for another reason: ${outcome.detail}`,
        );
        console.log(`  cell ${cell} skipped: ${outcome.detail}`);
      }
    },
  });
}

// Deterministic killers, one per family at most (about a second apiece, run at once): a
// check-then-act claim caught by cell 2's forced worst case (on with the race series), a
// resume breaker caught by cell 3's resume of each kill-series state.
const GENERATED_SAMPLE: Record<string, Record<string, unknown>> = {
  "where:claimHandoff:handoff_state": {},
  "ack-before-commit:rewindToMessage": {},
  "check-then-act:claimHandoff:handoff_state": { raceSeries: "locks" },
  "resume:publishCompressionChild:messages.id": {},
};

const generated = started(async () => {
  const set = await generateMutants((id) => id in GENERATED_SAMPLE);
  const sample = Object.keys(GENERATED_SAMPLE).map((id) => set.mutants.find((m) => m.id === id)!);
  const results = await Promise.all(
    sample.map((mutant) =>
      Promise.all(
        mutant.cells.map(async (cell) =>
          runDefinitions(
            await CELLS[cell]({
              target: mutant.target,
              keepEvidence: false,
              claimants: 4, // cells_test.ts's lighter race: the same catch, sooner
              minAcknowledged: 20,
              ...GENERATED_SAMPLE[mutant.id],
            }),
          )
        ),
      )
    ),
  );
  return { set, sample, results };
});

Deno.test({
  name:
    "generated mutants: every family reaches its floor, and a sample is caught by an intended cell",
  ...options,
  async fn() {
    const { set, sample, results } = await generated;
    for (const family of FAMILIES) {
      const count = set.mutants.filter((m) => m.family === family).length;
      ok(count >= FAMILY_FLOOR[family], `${family}: ${count} mutants`);
    }
    strictEqual(new Set(set.mutants.map((m) => m.id)).size, set.mutants.length);
    for (const id of Object.keys(EQUIVALENT)) {
      ok(set.mutants.find((m) => m.id === id)?.equivalent, `${id} is not marked equivalent`);
    }
    ok(set.mutants.every((m) => m.cells.length > 0), "a generated mutant without an intended cell");
    // A generated mutant keeps no crash point of the method it changes.
    const rewind = await import(sample[1]!.target.href);
    const points: string[] = rewind.crashPoints();
    ok(!points.some((p) => p.startsWith("rewindToMessage:")), points.join(", "));
    ok(points.includes("forkSession:afterCopy"), points.join(", "));
    for (const [i, mutant] of sample.entries()) {
      const outcomes = results[i]!.flat();
      // A harness error is never a catch: the suite must have run as planned.
      const erred = outcomes.filter((o) => o.status === "ERROR");
      ok(!erred.length, `harness error on ${mutant.id}: ${erred.map((o) => o.detail).join("; ")}`);
      // A SKIP is never evidence: an intended cell must have run and failed.
      const failed = outcomes.find((o) => o.status === "FAIL");
      ok(
        failed,
        `no intended cell failed on ${mutant.id}: ${
          outcomes.map((o) => `${o.status} ${o.detail ?? ""}`).join("; ")
        }`,
      );
      console.log(`  ${mutant.id} caught: ${failed.detail?.split("\n")[0]}`);
    }
  },
});
