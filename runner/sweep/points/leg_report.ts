// The crash sweep's report: a leg's outcomes summed up (coverage, matches, images), the
// line each leg prints, and the final table of every library and leg.
import {
  type JournalObservation,
  type Leg,
  type LegAudit,
  type LegName,
  legVerdict,
} from "../../../harness/legs.ts";
import { clauseOfPoint } from "../core/oracle.ts";
import { alsoJudged } from "../core/clause_checks.ts";
import type { StateOutcome } from "./run_state.ts";
import type { ClauseTally, LegSweep } from "../core/types.ts";

/** What a leg's report needs besides its outcomes. */
export interface LegFacts {
  /** The leg. */
  leg: LegName;
  /** The leg's verdict from the seeded store and every kill's observed journal mode. */
  audit: LegAudit;
  /** The selected points that are applicable; `undefined` when `--state` chose the states. */
  pointsSelected: number | undefined;
  /** Points no program reaches (the planner's list; the unreached ones are added). */
  uncovered: { point: string; reason: string }[];
  /** Points of methods the store lacks. */
  notApplicable: { point: string; reason: string }[];
  /** The full sequence space. */
  sequenceSpace: { sequences: number; states: number };
  /** Whether a crash image was used. */
  imaged: boolean;
  /** Wall time of the leg. */
  seconds: number;
  /** The store's methods (which clauses a state is judged for beyond its point's). */
  methods?: readonly string[];
}

/**
 * The leg's verdict from the seeded store at rest and the journal mode each state's
 * child ran in at its kill (`legVerdict`, as the cells judge their kills).
 *
 * @param leg The leg.
 * @param seeded The seeded store's observation.
 * @param outcomes The states.
 * @returns The verdict.
 */
export function legAudit(
  leg: Leg,
  seeded: JournalObservation,
  outcomes: readonly StateOutcome[],
): LegAudit {
  return legVerdict(leg, [seeded, ...outcomes.flatMap((o) => o.observation ?? [])]);
}

/**
 * Sums up a leg: a point is covered when every occurrence killed the child in an
 * operation owning it; the others join `uncovered` with why. A leg not honoured at some
 * kill is SKIPPED with the observations as its reason.
 *
 * @param facts The leg's plan and timing.
 * @param outcomes The states, in plan order.
 * @returns The leg's report.
 */
export function legReport(facts: LegFacts, outcomes: readonly StateOutcome[]): LegSweep {
  const pointStates = outcomes.filter((o) => o.state.kind === "point");
  const byPoint = new Map<string, StateOutcome[]>();
  for (const o of pointStates) {
    byPoint.set(o.state.point, [...(byPoint.get(o.state.point) ?? []), o]);
  }
  const uncovered = [...facts.uncovered];
  let pointsCovered = 0;
  for (const [point, list] of byPoint) {
    const missed = list.filter((o) => !o.covered);
    if (missed.length === 0) pointsCovered++;
    else {
      uncovered.push({
        point,
        reason: `not reached at ${missed.map((o) => `@${o.state.k}`).join(", ")}: ${
          missed[0]!.failure?.problems[0] ?? "?"
        }`,
      });
    }
  }
  const clauses: Record<string, ClauseTally> = {};
  const tallyOf = (clause: string) =>
    clauses[clause] ??= { programs: 0, states: 0, torn: 0, resumes: 0, failures: 0 };
  const tally = (point: string) => tallyOf(clauseOfPoint(point));
  for (const o of outcomes) {
    tally(o.state.point).states++;
    if (o.failure) tally(o.state.point).failures++;
    for (const clause of alsoJudged(o.state.program, facts.methods ?? [])) {
      tallyOf(clause).states++;
      if (o.failure?.problems.some((p) => p.startsWith(`${clause}: `))) tallyOf(clause).failures++;
    }
  }
  for (const u of uncovered) tally(u.point).failures++;
  const mean = (f: (o: StateOutcome) => number) =>
    outcomes.length ? Math.round(outcomes.reduce((s, o) => s + f(o), 0) / outcomes.length) : 0;
  return {
    leg: facts.leg,
    // A kill observed in another mode voids the leg's evidence: SKIP, never PASS.
    status: facts.audit.honoured ? "RUN" : "SKIP",
    ...(facts.audit.honoured ? {} : { reason: facts.audit.reason! }),
    onDisk: facts.audit.onDisk,
    pointsTotal: facts.pointsSelected ?? byPoint.size,
    pointsCovered,
    uncovered,
    notApplicable: facts.notApplicable,
    pointStates: pointStates.length,
    sequenceStates: outcomes.length - pointStates.length,
    sequenceSpace: facts.sequenceSpace,
    states: outcomes.length,
    matched: {
      without: outcomes.filter((o) => o.match === "without").length,
      with: outcomes.filter((o) => o.match === "with").length,
      unchanged: outcomes.filter((o) => o.match === "unchanged").length,
    },
    ...(facts.imaged
      ? {
        imaged: {
          states: outcomes.filter((o) => o.imageDiffers !== undefined).length,
          differing: outcomes.filter((o) => o.imageDiffers).length,
        },
      }
      : {}),
    failures: outcomes.filter((o) => o.failure).map((o) => o.failure!),
    clauses,
    seconds: facts.seconds,
    meanChildMs: mean((o) => o.childMs),
    meanCheckMs: mean((o) => o.checkMs),
  };
}

/**
 * The lines a leg prints when it is done: its figures, then its uncovered and
 * not-applicable points.
 *
 * @param result The leg's report.
 * @returns The lines.
 */
export function legLines(result: LegSweep): string[] {
  const name = result.leg;
  return [
    ...(result.status === "SKIP" ? [`leg ${name.padEnd(7)} SKIP: ${result.reason}`] : []),
    `leg ${
      name.padEnd(7)
    } points ${result.pointsCovered}/${result.pointsTotal} covered (100% needed), ` +
    `${result.states} states (${result.pointStates} point, ${result.sequenceStates} sequence; ` +
    `interrupted op absent ${result.matched.without}, complete ${result.matched.with}, ` +
    `no-op ${result.matched.unchanged}), ` +
    (result.imaged
      ? `${result.imaged.differing}/${result.imaged.states} images dropped unsynced writes, `
      : "") +
    `${result.failures.length} failed, ${result.seconds.toFixed(1)} s, ${
      (result.states / result.seconds).toFixed(1)
    } states/s (child ${result.meanChildMs} ms, check ${result.meanCheckMs} ms per state)`,
    ...result.uncovered.map((u) => `  UNCOVERED ${u.point} [${name}]: ${u.reason}`),
    ...result.notApplicable.map((u) => `  N/A ${u.point} [${name}]: ${u.reason}`),
  ];
}
