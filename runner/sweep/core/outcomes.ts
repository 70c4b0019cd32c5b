// The sweep's reports as the engine's typed results: one Outcome per clause × leg ×
// library, judged states counted. A clause that judged no state is a SKIP with why, never
// a PASS; a leg not honoured is a SKIP with the observations; a store that could not be
// seeded is a FAIL leading with its error; a run the recorder's model could not follow
// is an ERROR (the suite's, never a verdict on the store); a failure carries its checks
// (one line each), the command that replays it, its evidence and, under power loss, the
// known pattern's cause and fix.
import type { Outcome, TierName } from "../../result.ts";
import type { CellReport, Diagnosis } from "../../../cells/engine/report.ts";
import { diagnosis } from "../../../cells/engine/diagnoses.ts";
import { CLAUSE_CELLS, clauseOfPoint } from "./oracle.ts";
import type { CallFailure, CallSweepReport, SweepFailure, SweepReport } from "./types.ts";

/** The clauses the sweep judges, by cell, for the cells asked for. */
function clausesOf(cells?: readonly number[]): [string, number][] {
  return Object.entries(CLAUSE_CELLS).filter(([, cell]) => !cells || cells.includes(cell));
}

/** `5 delivery outbox exactly-once`: a clause as the results name it. */
export function clauseName(clause: string): string {
  const cell = CLAUSE_CELLS[clause];
  return cell === undefined ? clause : `${cell} ${clause}`;
}

/** At most `n` failures as check lines: `<state>: <problem>`. */
function checkLines(failures: readonly (SweepFailure | CallFailure)[], n = 5): string[] {
  const lines = failures.slice(0, n).flatMap((f) => {
    const where = "point" in f ? f.state : `${f.program} #${f.call} (${f.state})`;
    return f.problems.slice(0, 3).map((p) => `${where}: ${p}`);
  });
  if (failures.length > n) lines.push(`… ${failures.length - n} more failing states`);
  return lines;
}

/** An ERROR from failures only the suite caused: their checks, the first's replay, evidence. */
function unjudgedError(unjudged: readonly (SweepFailure | CallFailure)[]): Partial<Outcome> {
  const checks = checkLines(unjudged);
  const [first] = unjudged;
  return {
    status: "ERROR",
    reason: checks[0]!,
    checks,
    replay: first!.replay,
    ...(first!.evidence ? { evidence: first!.evidence } : {}),
  };
}

/** Whether a failure has a problem of `clause` (a state judged for a clause beyond its operation's). */
function namesClause(failure: SweepFailure | CallFailure, clause: string): boolean {
  return failure.problems.some((p) => p.includes(`${clause}: `));
}

/** What every outcome of one library's run shares. */
export interface OutcomeBase {
  /** The tier. */
  tier: TierName;
  /** The library label (`system`, `fixed`, `own`, `none`). */
  library: string;
  /** The cells asked for. */
  cells?: readonly number[];
}

/** The named-point sweep of one library: an outcome per clause × leg. */
export function pointOutcomes(report: SweepReport, base: OutcomeBase): Outcome[] {
  const out: Outcome[] = [];
  for (const leg of report.legs) {
    const common = {
      tier: base.tier,
      leg: leg.leg,
      library: base.library,
      sqliteVersion: report.sqliteVersion,
      seed: report.seed,
    };
    for (const [clause, cell] of clausesOf(base.cells)) {
      const tally = leg.clauses?.[clause];
      const named = leg.failures.filter((f) =>
        clauseOfPoint(f.point) === clause || namesClause(f, clause)
      );
      const failures = named.filter((f) => !f.harness);
      const unjudged = named.filter((f) => f.harness);
      const uncovered = leg.uncovered.filter((u) => clauseOfPoint(u.point) === clause);
      const result: Outcome = {
        clause: clauseName(clause),
        cell,
        ...common,
        status: "PASS",
        judged: tally?.states ?? 0,
        figures: {
          states: tally?.states ?? 0,
          seconds: leg.seconds,
          statesPerSecond: leg.seconds ? leg.states / leg.seconds : 0,
          onDisk: leg.onDisk,
        },
      };
      if (leg.status === "SKIP") Object.assign(result, { status: "SKIP", reason: leg.reason });
      else if (leg.reason) {
        Object.assign(result, { status: "FAIL", reason: leg.reason, checks: [leg.reason] });
      } else if (failures.length || uncovered.length) {
        const checks = [
          ...checkLines(failures),
          ...uncovered.map((u) => `uncovered ${u.point}: ${u.reason}`),
        ];
        Object.assign(result, {
          status: "FAIL",
          reason: checks[0],
          checks,
          ...(failures[0] ? { replay: failures[0].replay } : {}),
          ...(failures[0]?.evidence ? { evidence: failures[0].evidence } : {}),
        });
      } else if (unjudged.length) {
        Object.assign(result, unjudgedError(unjudged));
      } else if (!tally?.states) {
        Object.assign(result, {
          status: "SKIP",
          reason: `no crash point of this clause was swept (${
            leg.notApplicable.length
              ? "the store lacks its operations' methods"
              : "the target declares none for its operations, or --points left them out"
          })`,
        });
      }
      out.push(result);
    }
  }
  return out;
}

/** The known patterns of a recorded-call failure, each once (read from its recorded calls). */
function callDiagnoses(failures: readonly CallFailure[]): Diagnosis[] {
  const patterns = new Set(failures.flatMap((f) => f.pattern ? [f.pattern] : []));
  return [...patterns].map(diagnosis);
}

/** The recorded-call sweep of one library and leg: an outcome per clause. */
export function callOutcomes(
  report: CallSweepReport | { skip: string },
  base: OutcomeBase & { leg: string },
): Outcome[] {
  return clausesOf(base.cells).map(([clause, cell]) => {
    const result: Outcome = {
      clause: clauseName(clause),
      cell,
      tier: base.tier,
      leg: base.leg,
      library: base.library,
      status: "PASS",
      judged: 0,
    };
    if ("skip" in report) return { ...result, status: "SKIP", reason: report.skip };
    const tally = report.clauses[clause];
    const open = report.failures.find((f) => f.clause === "open");
    const failures = report.failures.filter((f) =>
      !f.harness && (f.clause === clause || namesClause(f, clause))
    );
    const unjudged = report.failures.filter((f) => f.harness && f.clause === clause);
    const harness = report.failures.filter((f) => f.clause === "torn writes");
    Object.assign(result, {
      sqliteVersion: report.sqliteVersion,
      seed: report.seed,
      judged: tally?.states ?? 0,
      figures: {
        programs: tally?.programs ?? 0,
        states: tally?.states ?? 0,
        tornStates: tally?.torn ?? 0,
        resumes: tally?.resumes ?? 0,
        judgedDistinct: report.judged,
        seconds: report.seconds,
        statesPerSecond: report.statesPerSecond,
        onDisk: report.onDisk,
        ...(report.mode === "power-loss" ? { torn: report.torn } : {}),
      },
    });
    if (open) {
      return {
        ...result,
        status: "FAIL",
        reason: open.problems[0] ?? "the store could not be seeded",
        checks: open.problems,
      };
    }
    if (report.notHonoured) return { ...result, status: "SKIP", reason: report.notHonoured };
    if (failures.length) {
      const checks = checkLines(failures);
      const diagnoses = callDiagnoses(failures);
      return {
        ...result,
        status: "FAIL",
        reason: checks[0] ?? "failed",
        checks,
        ...(diagnoses.length ? { diagnoses } : {}),
        replay: failures[0]!.replay,
        ...(report.dir ? { evidence: failures[0]!.evidence ?? report.dir } : {}),
      };
    }
    if (unjudged.length) return { ...result, ...unjudgedError(unjudged) };
    if (harness.length && tally?.states) {
      return {
        ...result,
        status: "ERROR",
        reason: harness[0]!.problems[0] ?? "torn writes",
        checks: harness[0]!.problems,
      };
    }
    if (!tally?.states) {
      return {
        ...result,
        status: "SKIP",
        reason: `no program of this clause ran: the store lacks its operations' methods`,
      };
    }
    return result;
  });
}

/** What the power-loss cells noted of one run (`ack kill`, `random kill`). */
interface RunFigures {
  statesChecked?: number;
  statesJudged?: number;
  torn?: { states: number; tearable: number };
  resumes?: { run: number; failed: number; candidates: number };
  checking?: { seconds: number; cpuSeconds?: number; recovered?: number };
  diagnoses?: Diagnosis[];
}

/** The power-loss cell's report as an outcome: states, torn states and resumes judged. */
export function cellOutcome(report: CellReport, base: OutcomeBase & { replay: string }): Outcome {
  const runs = Object.values(report.figures).filter((v): v is RunFigures =>
    typeof v === "object" && v !== null && "statesChecked" in v
  );
  const sum = (f: (r: RunFigures) => number | undefined) =>
    runs.reduce((n, r) => n + (f(r) ?? 0), 0);
  const judged = sum((r) => r.statesChecked);
  const diagnoses = report.diagnoses ?? runs.flatMap((r) => r.diagnoses ?? []);
  const seed = typeof report.figures.seed === "number" ? report.figures.seed : undefined;
  const status = report.status === "PASS" && judged === 0 ? "SKIP" : report.status;
  return {
    clause: `${report.cell} ${report.title.replace(/^power-loss /, "")}`,
    cell: report.cell,
    tier: base.tier,
    leg: report.leg,
    library: base.library,
    sqliteVersion: report.sqliteVersion,
    status,
    ...(status === "SKIP" && report.status === "PASS"
      ? { reason: "no crash state was judged" }
      : report.reason
      ? { reason: report.reason }
      : {}),
    ...(report.checks?.length ? { checks: report.checks } : {}),
    ...(status === "FAIL" && diagnoses.length ? { diagnoses } : {}),
    ...(report.evidence ? { evidence: report.evidence } : {}),
    ...(seed !== undefined ? { seed } : {}),
    replay: `${base.replay} --cells ${report.cell} --legs ${report.leg}${
      seed !== undefined ? ` --seed ${seed}` : ""
    }`,
    judged,
    figures: {
      states: judged,
      judgedDistinct: sum((r) => r.statesJudged),
      tornStates: sum((r) => r.torn?.states),
      tearableInstants: sum((r) => r.torn?.tearable),
      resumes: sum((r) => r.resumes?.run),
      resumeCandidates: sum((r) => r.resumes?.candidates),
      seconds: sum((r) => r.checking?.seconds),
      cpuSeconds: sum((r) => r.checking?.cpuSeconds),
      recovered: sum((r) => r.checking?.recovered),
    },
  };
}
