// The crash sweep: its plan covers every crash point of the reference store, a small
// sample passes on the reference store (its batch and rotation states judged for cells 9
// and 8), and the sweep catches the two-transaction rotation mutant at the crash point
// between its transactions, naming that point, and a resolution to a rotated parent; the
// power-loss variant catches a durability bug (DELETE mode with synchronous=FULL) that the
// SIGKILL sweep cannot see, and passes on the reference store.
import { deepStrictEqual, ok } from "node:assert/strict";
import { currentLeg } from "../../../harness/legs.ts";
import { crashPoints } from "../../../cells/reference_target.ts";
import { planPoints, sequenceSpace } from "../core/plan.ts";
import { sweep } from "./points.ts";
import type { SweepReport } from "../core/types.ts";
import { RunDir } from "../../../harness/evidence.ts";
import { observeJournalMode } from "../../../harness/legs.ts";
import { parseStateId } from "../core/plan.ts";
import { seedStore } from "../core/program.ts";
import { legAudit, legReport } from "./leg_report.ts";
import { runState } from "./run_state.ts";
import type { LegContext } from "../core/state_child.ts";
import { lastSyncImage } from "./last_sync.ts";

const BETWEEN = "publishCompressionChild:betweenTransactions";
const MUTANT = new URL(
  "../../../cells/testdata/mutants/rotation_two_transactions.ts",
  import.meta.url,
);
// Every method a program may call: the reference store has them all.
const METHODS = [
  "createSession",
  "appendMessage",
  "appendMessages",
  "getMessages",
  "listSessions",
  "close",
  "requestHandoff",
  "claimHandoff",
  "tryAcquireCompressionLock",
  "publishCompressionChild",
  "releaseCompressionLock",
  "rewindToMessage",
  "forkSession",
  "recordObligation",
  "markAttempting",
  "markDelivered",
  "markFailed",
  "markUnknown",
  "sweepRecoverable",
  "listObligations",
];
const quiet = () => {};

/** The leg this process runs on, or `undefined` (with the reason printed) when skipped. */
function ranLeg(report: SweepReport) {
  const leg = report.legs[0]!;
  if (leg.status === "SKIP") {
    // Every SQLite honours the default leg (CI's): a SKIP there is a failure, not a pass.
    ok(currentLeg().name !== "default", `the default leg was skipped: ${leg.reason}`);
    console.log(`  SKIP (leg not applicable): ${leg.reason}`);
    return undefined;
  }
  return leg;
}

Deno.test("sweep plan: every reference crash point has a program, the space is sized", () => {
  const points = crashPoints().filter((p) => p !== BETWEEN);
  const { states, uncovered } = planPoints(points, METHODS, {});
  deepStrictEqual(uncovered, []);
  deepStrictEqual(states.length, points.length * 3);
  // 7 + 49 + 343 sequences; 57 end in each operation, whose states are its points' hits.
  deepStrictEqual(sequenceSpace(points, METHODS, {}), { sequences: 399, states: 1368 });
  deepStrictEqual(sequenceSpace(points, METHODS, { maxLength: 1 }), { sequences: 7, states: 24 });
  // A point no program reaches is uncovered (a failure); one of a method the store lacks is n/a.
  const { uncovered: missing } = planPoints(["someMethod:afterX"], [...METHODS, "someMethod"], {});
  ok(/no sweep operation calls someMethod/.test(missing[0]?.reason ?? ""), "an unowned point");
  const withoutBatch = METHODS.filter((m) => m !== "appendMessages");
  const { notApplicable } = planPoints(["appendMessages:afterInsert"], withoutBatch, {});
  deepStrictEqual(notApplicable.map((p) => p.point), ["appendMessages:afterInsert"]);
});

Deno.test({
  name: "sweep catches rotation in two transactions at publishCompressionChild:betweenTransactions",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const report = await sweep({
      target: MUTANT,
      legs: [currentLeg().name],
      points: ["publishCompressionChild:"],
      sequences: "none",
      seed: 8,
      keepEvidence: false,
      log: quiet,
    });
    const leg = ranLeg(report);
    if (!leg) return;
    deepStrictEqual(leg.pointsTotal, 1, "the mutant's only rotation point");
    deepStrictEqual(leg.pointsCovered, 1, JSON.stringify(leg.uncovered));
    deepStrictEqual(leg.failures.map((f) => f.state), [1, 2, 3].map((k) => `${BETWEEN}@${k}`));
    for (const failure of leg.failures) {
      ok(failure.clause === "rotation atomicity", failure.problems.join("\n"));
      ok(failure.problems.some((p) => /compression orphan/.test(p)), failure.problems.join("\n"));
      ok(failure.replay.includes(`--state ${BETWEEN}@${failure.k}`), failure.replay);
    }
    deepStrictEqual(report.failingPoints, [{ point: BETWEEN, states: 3 }]);
    ok(!report.ok);
    console.log(`  caught at ${BETWEEN}: ${leg.failures[0]!.problems[0]!.slice(0, 120)}…`);
  },
});

Deno.test({
  name: "sweep sample passes on the reference store: rotation points and sequences",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const report = await sweep({
      legs: [currentLeg().name],
      points: ["publishCompressionChild:", "appendMessages:"],
      sequences: "sample",
      sample: 6,
      seed: 8,
      keepEvidence: false,
      log: quiet,
    });
    const leg = ranLeg(report);
    if (!leg) return;
    deepStrictEqual(leg.failures.map((f) => f.problems), []);
    deepStrictEqual(leg.uncovered, []);
    deepStrictEqual([leg.pointsCovered, leg.pointsTotal], [8, 8]);
    deepStrictEqual([leg.pointStates, leg.sequenceStates], [24, 6]);
    ok(leg.matched.without > 0 && leg.matched.with > 0, JSON.stringify(leg.matched));
    // A batch's states are cell 9's; a rotation's are judged for cell 8's resolution too.
    for (const clause of ["batch atomicity", "resume resolution", "rotation atomicity"]) {
      ok((leg.clauses?.[clause]?.states ?? 0) > 0, `${clause}: ${JSON.stringify(leg.clauses)}`);
    }
    ok(report.ok);
    console.log(
      `  ${report.states} states, ${
        report.statesPerSecond.toFixed(1)
      } states/s, seed ${report.seed}`,
    );
  },
});

Deno.test({
  name: "sweep catches a resolution to the rotated parent after a published rotation",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const state = "publishCompressionChild:afterCommit@1";
    const report = await sweep({
      target: new URL("../../../cells/testdata/mutants/resolve_returns_parent.ts", import.meta.url),
      legs: [currentLeg().name],
      states: [state],
      seed: 8,
      keepEvidence: false,
      log: quiet,
    });
    const leg = ranLeg(report);
    if (!leg) return;
    deepStrictEqual(leg.failures.map((f) => f.state), [state]);
    const problems = leg.failures[0]!.problems;
    ok(
      problems.some((p) =>
        /^resume resolution: resolveResumeSessionId\(main\) = main, expected the live tip rot-0$/
          .test(p)
      ),
      problems.join("\n"),
    );
    deepStrictEqual(leg.clauses?.["resume resolution"]?.failures, 1);
  },
});

Deno.test({
  name:
    "sweep: a kill observed in another mode than the leg's makes it SKIP, though at rest it reads right",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    // One crash child on a store seeded here (what `sweep` does per leg, minus its setup child).
    const target = new URL("../testdata/mode_switched_in_close.ts", import.meta.url).href;
    const leg = { ...currentLeg(), name: "delete" as const };
    const { openStore } = await import(target);
    const root = await RunDir.create("sweep-leg-observed");
    const template = root.store("template");
    const seededStore = await openStore(template, { journalMode: "delete" });
    await seedStore(seededStore, 8);
    await seededStore.close();
    const ctx: LegContext = {
      leg,
      target,
      seed: 8,
      root,
      template,
      openStore: (path: string) => openStore(path, { journalMode: "delete" }),
      references: new Map(),
      keepEvidence: false,
    };
    const outcome = await runState(ctx, parseStateId("appendMessage:afterCommit@1"), 0);
    const seeded = observeJournalMode(template, "the seeded store, at rest", true);
    await Deno.remove(root.path, { recursive: true });
    deepStrictEqual([seeded.mode, outcome.covered, outcome.failure], ["delete", true, undefined]);
    const report = legReport({
      leg: "delete",
      audit: legAudit(leg, seeded, [outcome]),
      pointsSelected: 1,
      uncovered: [],
      notApplicable: [],
      sequenceSpace: { sequences: 0, states: 0 },
      imaged: false,
      seconds: 1,
    }, [outcome]);
    deepStrictEqual(report.status, "SKIP", "a leg observed in WAL at its kill was not skipped");
    ok(
      /^leg delete not honoured: .*appendMessage:afterCommit@1: wal$/.test(report.reason!),
      report.reason,
    );
    deepStrictEqual(report.onDisk, "delete, wal");
  },
});

// An append (acknowledged), then a rewind killed before its first write: with FULL the
// append's journal was unlinked without a folder sync, so after a power loss it is hot again.
const LOST_APPEND = "append+rewind/rewindToMessage:afterVerify@1";
const DELETE_FULL = new URL("../../../cells/testdata/mutants/delete_full.ts", import.meta.url);

Deno.test({
  name: "power-loss sweep catches DELETE+FULL losing an acknowledged append; SIGKILL sweep cannot",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const image = await lastSyncImage();
    const run = (target: URL | undefined, powerLoss: boolean, states: string[]) =>
      sweep({
        ...(target ? { target } : {}),
        legs: [currentLeg().name],
        states,
        seed: 8,
        keepEvidence: false,
        log: quiet,
        ...(powerLoss ? { crashImage: image } : {}),
      });
    const states = [LOST_APPEND, "appendMessage:afterCommit@2", "rewindToMessage:afterCount@1"];
    const reference = await run(undefined, true, states);
    const ref = ranLeg(reference);
    if (!ref) return;
    deepStrictEqual(ref.failures.map((f) => f.problems), []);
    deepStrictEqual(ref.states, 3);
    ok(reference.ok);
    const caught = await run(DELETE_FULL, true, [LOST_APPEND]);
    const leg = ranLeg(caught);
    if (!leg) return;
    deepStrictEqual(leg.failures.map((f) => f.state), [LOST_APPEND]);
    const failure = leg.failures[0]!;
    deepStrictEqual(failure.clause, "durability", failure.problems.join("\n"));
    ok(/acknowledged operation 0 \(append\) lost/.test(failure.problems[0]!), failure.problems[0]);
    ok(failure.replay.includes("--power-loss"), failure.replay);
    deepStrictEqual(leg.imaged, { states: 1, differing: 1 });

    const sigkill = ranLeg(await run(DELETE_FULL, false, [LOST_APPEND]))!;
    deepStrictEqual(sigkill.failures.map((f) => f.problems), [], "the SIGKILL sweep passes");

    console.log(
      `  caught: ${
        failure.problems[0]
      }; reference: ${ref.imaged?.differing}/3 images dropped writes`,
    );
  },
});
