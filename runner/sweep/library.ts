// One library's share of a tier, in a process of its own (`children/library.ts`: the FFI
// binding loads one SQLite library per process, and the cells read their settings from
// the environment, which this sets): the
// named-point sweep, the recorded-call sweep in one mode on each leg, or the power-loss
// cells on each leg; each turned into typed outcomes.
import type { Survivor } from "../../harness/process_tree.ts";
import type { LegName } from "../../harness/legs.ts";
import { sqliteLibraryPath, sqliteVersion } from "../../session_db/sqlite/database.ts";
import { readCellReports } from "../../cells/engine/report.ts";
import type { PowerLossOptions } from "../../cells/power_loss/mod.ts";
import { powerLossBatchCell } from "../../cells/batch_atomicity/power_loss.ts";
import { powerLossEndsCell } from "../../cells/ends_and_reopens/power_loss.ts";
import { powerLossForkCell } from "../../cells/fork_determinism/power_loss.ts";
import { powerLossHandoffCell } from "../../cells/pending_handoffs/power_loss.ts";
import { powerLossRenewalCell } from "../../cells/lease_renewal/power_loss.ts";
import { powerLossOutboxCell } from "../../cells/outbox_exactly_once/power_loss.ts";
import { powerLossPrefixCell } from "../../cells/prefix_durability/power_loss.ts";
import { powerLossRotationCell } from "../../cells/rotation_atomicity/power_loss.ts";
import { powerLossResolutionCell } from "../../cells/resume_resolution/power_loss.ts";
import { runDefinitions } from "../../cells/engine/run_definitions.ts";
import type { Profile } from "../../recorder/crash_states.ts";
import type { Outcome, TierName } from "../result.ts";
import { sweepCalls } from "./calls/calls.ts";
import { type FaultSweepReport, sweepFaults } from "./calls/faults.ts";
import { lastSyncImage } from "./points/last_sync.ts";
import { callOutcomes, cellOutcome, pointOutcomes } from "./core/outcomes.ts";
import { sweep } from "./points/points.ts";
import { judgingAt } from "../../internal/judging_beacon.ts";
import type { CallSweepReport, SweepReport } from "./core/types.ts";

/** The power-loss tier's cells, by number. */
export const POWER_LOSS_CELLS: Readonly<
  Record<number, (options: PowerLossOptions) => Promise<Deno.TestDefinition[]>>
> = {
  1: powerLossPrefixCell,
  3: powerLossRotationCell,
  4: powerLossForkCell,
  5: powerLossOutboxCell,
  8: powerLossResolutionCell,
  9: powerLossBatchCell,
  10: powerLossEndsCell,
  11: powerLossRenewalCell,
  12: powerLossHandoffCell,
};

/**
 * The power-loss cells a share runs: those asked for that the tier has, else every one.
 *
 * @param asked The cells asked for, if any.
 * @returns Their numbers.
 */
export function powerLossCellsOf(asked?: readonly number[]): number[] {
  return (asked ?? Object.keys(POWER_LOSS_CELLS).map(Number)).filter((c) => POWER_LOSS_CELLS[c]);
}

/** The knobs of the named-point sweep (`sweep` tier). */
export interface PointKnobs {
  /** Only these crash points (exact names, or method prefixes ending with `:`). */
  points?: string[];
  /** Occurrences of each point (default 1, 2, 3; quick: 1). */
  occurrences?: number[];
  /** Bounded sequences: none, a sample (default; quick: none) or the full space. */
  sequences?: "none" | "sample" | "full";
  /** Sequence states in the sample (default 100). */
  sample?: number;
  /** The longest sequence (default 3). */
  maxLength?: number;
  /** Exactly these states (ids as reported). */
  states?: string[];
  /** Check the last-sync image (power loss) instead of the files the SIGKILL left. */
  powerLoss?: boolean;
}

/** The knobs of the recorded-call sweep (`syscalls-crash`, `syscalls-power-loss` tiers). */
export interface CallKnobs {
  /** Only these programs (operations joined by `+`). */
  programs?: string[];
  /** The longest program (default 2; quick: 1). */
  maxLength?: number;
  /** Only this state of each program (a replay). */
  call?: number;
  /** Crash mode: real SIGKILL children per program (default 1). */
  kills?: number;
  /** Recovered states continued per program (default 1). */
  resumes?: number;
  /** Power loss: the persistence profile (default posix). */
  profile?: Profile;
  /** Power loss: random states per instant beyond the exhaustive bound (default 12; quick: 4). */
  subsets?: number;
  /** Power loss: only the last N instants (default all). */
  instants?: number;
}

/** The power-loss cells' knobs. */
export interface CellKnobs {
  /** The persistence profile (default posix). */
  profile?: Profile;
  /** Random states per instant (default 12; quick: 4). */
  subsets?: number;
  /** Only the last N sync points of each run (default all; quick: 24). */
  instants?: number;
  /** Recovered states continued per run (default 3; quick: 1). */
  resumes?: number;
  /** The writers' durability policy variables (`NODE_SQLITE_*`, `SESSION_DB_SYNCHRONOUS`, …). */
  env?: Record<string, string>;
}

/** One library's share of a tier. */
export interface LibraryRequest {
  /** The tier. */
  tier: TierName;
  /** The target specifier. */
  target: string;
  /** The legs. */
  legs: LegName[];
  /** The library's label in the results (`system`, `fixed`, `own`, `none`). */
  label: string;
  /** The seed. */
  seed: number;
  /** Fewer states. */
  quick: boolean;
  /** Children in flight. */
  jobs?: number;
  /** The cells asked for. */
  cells?: number[];
  /** Where evidence goes. */
  evidenceDir: string;
  /** The command a replay starts with (with the library's path). */
  replay: string;
  /** The sweep's knobs. */
  points?: PointKnobs;
  /** The recorded-call sweep's knobs. */
  calls?: CallKnobs;
  /** The power-loss cells' knobs. */
  powerLoss?: CellKnobs;
  /** How long one state's judging in the share's process may take (default 2 min). */
  judgingDeadlineMs?: number;
}

/** One library's outcomes and the reports they come from. */
export interface LibraryResult {
  /** The typed results. */
  outcomes: Outcome[];
  /** The sweep's own reports (figures beyond the outcomes), for the JSON report. */
  reports: (SweepReport | CallSweepReport | FaultSweepReport | { skip: string })[];
  /** What the share's process started and left running (killed since). */
  survivors?: Survivor[];
}

/**
 * Sets environment variables (`undefined`: unset) for the duration of `work`: the cells
 * read theirs there, and so does every open of the store in this process (the judge's).
 */
async function withEnv<T>(
  vars: Record<string, string | undefined>,
  work: () => Promise<T>,
): Promise<T> {
  const before = Object.fromEntries(Object.keys(vars).map((k) => [k, Deno.env.get(k)]));
  for (const [k, v] of Object.entries(vars)) {
    if (v === undefined) Deno.env.delete(k);
    else Deno.env.set(k, v);
  }
  try {
    return await work();
  } finally {
    for (const [k, v] of Object.entries(before)) {
      if (v === undefined) Deno.env.delete(k);
      else Deno.env.set(k, v);
    }
  }
}

async function pointsShare(r: LibraryRequest, log: (line: string) => void): Promise<LibraryResult> {
  const k = r.points ?? {};
  const report = await sweep({
    target: r.target,
    legs: r.legs,
    seed: r.seed,
    log,
    ...(r.jobs !== undefined ? { jobs: r.jobs } : {}),
    ...(k.points ? { points: k.points } : {}),
    ...(k.states ? { states: k.states } : {}),
    ...(k.maxLength !== undefined ? { maxLength: k.maxLength } : {}),
    ...(k.sample !== undefined ? { sample: k.sample } : {}),
    occurrences: k.occurrences ?? (r.quick ? [1] : [1, 2, 3]),
    sequences: k.sequences ?? (r.quick ? "none" : "sample"),
    ...(k.powerLoss ? { crashImage: await lastSyncImage() } : {}),
  });
  return {
    outcomes: pointOutcomes(report, {
      tier: r.tier,
      library: r.label,
      ...(r.cells ? { cells: r.cells } : {}),
    }),
    reports: [report],
  };
}

async function callsShare(r: LibraryRequest, log: (line: string) => void): Promise<LibraryResult> {
  const k = r.calls ?? {};
  const result: LibraryResult = { outcomes: [], reports: [] };
  for (const leg of r.legs) {
    const report = await judgingAt({ leg }, () =>
      sweepCalls({
        target: r.target,
        leg,
        seed: r.seed,
        mode: r.tier === "syscalls-power-loss" ? "power-loss" : "crash",
        log,
        maxLength: k.maxLength ?? (r.quick ? 1 : 2),
        resumes: k.resumes ?? 1,
        ...(r.quick || k.subsets !== undefined ? { subsets: k.subsets ?? 4 } : {}),
        ...(r.jobs !== undefined ? { jobs: r.jobs } : {}),
        ...(r.cells ? { cells: r.cells } : {}),
        ...(k.programs ? { programs: k.programs } : {}),
        ...(k.call !== undefined ? { call: k.call } : {}),
        ...(k.kills !== undefined ? { kills: k.kills } : {}),
        ...(k.profile ? { profile: k.profile } : {}),
        ...(k.instants !== undefined ? { instants: k.instants } : {}),
      }));
    result.reports.push(report);
    result.outcomes.push(
      ...callOutcomes(report, {
        tier: r.tier,
        library: r.label,
        leg,
        ...(r.cells ? { cells: r.cells } : {}),
      }),
    );
  }
  return result;
}

async function cellsShare(r: LibraryRequest, log: (line: string) => void): Promise<LibraryResult> {
  const k = r.powerLoss ?? {};
  const outcomes: Outcome[] = [];
  const cells = powerLossCellsOf(r.cells);
  for (const leg of r.legs) {
    for (const cell of cells) {
      const reports = await Deno.makeTempDir({ prefix: "powerloss-cells-" });
      const started = performance.now();
      // The leg's journal mode for this process too: a state the judge opens here in
      // another mode would be converted before the recoverers and the new life see it.
      const journal = leg === "default" ? undefined : leg;
      const vars = { CELLS_REPORT_DIR: reports, SESSION_DB_JOURNAL_MODE: journal };
      const place = { leg, clause: `${cell} power-loss cell`, cell };
      const [definition] = await withEnv(vars, () =>
        judgingAt(place, async () =>
          runDefinitions(
            await POWER_LOSS_CELLS[cell]!({
              target: r.target,
              leg: { name: leg, library: sqliteLibraryPath(), sqliteVersion: sqliteVersion() },
              seed: r.seed,
              subsets: k.subsets ?? (r.quick ? 4 : 12),
              resumes: k.resumes ?? (r.quick ? 1 : 3),
              // Quick: cell 5's recoverers race on the kill's own state, not two more drawn.
              ...(r.quick && cell === 5 ? { racedStates: 1 } : {}),
              ...(k.profile ? { profile: k.profile } : {}),
              // Quick: the last sync points of each run (where the kill's state is decided).
              ...(k.instants !== undefined || r.quick ? { instants: k.instants ?? 24 } : {}),
              ...(k.env ? { env: k.env } : {}),
            }),
          )));
      const [report] = (await readCellReports(reports)).reports;
      await Deno.remove(reports, { recursive: true }).catch(() => {});
      const seconds = (performance.now() - started) / 1000;
      const outcome: Outcome = report
        ? cellOutcome(report, { tier: "powerloss-cells", library: r.label, replay: r.replay })
        : {
          clause: `${cell} power-loss cell`,
          cell,
          tier: "powerloss-cells",
          leg,
          library: r.label,
          status: definition?.status === "FAIL" ? "FAIL" : "SKIP",
          reason: definition?.detail ?? "the cell did not report",
          judged: 0,
        };
      outcome.seconds = seconds;
      log(
        `  cell ${cell} on leg ${leg}: ${outcome.status} in ${seconds.toFixed(1)} s${
          outcome.reason ? `: ${outcome.reason.split("\n")[0]}` : ""
        }`,
      );
      outcomes.push(outcome);
    }
  }
  return { outcomes, reports: [] };
}

/**
 * The recorded-call sweep's programs under injected faults, one outcome per leg: the
 * part of clause F1 the fault tier runs here, beside F1's own program.
 */
async function faultsShare(r: LibraryRequest, log: (line: string) => void): Promise<LibraryResult> {
  const result: LibraryResult = { outcomes: [], reports: [] };
  for (const leg of r.legs) {
    const started = performance.now();
    const place = { leg, clause: "F1 injected errors" };
    const report = await judgingAt(place, () =>
      sweepFaults({
        target: r.target,
        leg,
        seed: r.seed,
        quick: r.quick,
        log,
        ...(r.jobs !== undefined ? { jobs: r.jobs } : {}),
        ...(r.calls?.programs ? { programs: r.calls.programs } : {}),
      }));
    result.reports.push(report);
    result.outcomes.push(
      faultsOutcome(report, { leg, library: r.label, replay: r.replay, started }),
    );
  }
  return result;
}

/** One leg's sweep under faults as an F1 row (merged with F1's own program by the tier). */
function faultsOutcome(
  report: FaultSweepReport | { skip: string },
  at: { leg: LegName; library: string; replay: string; started: number },
): Outcome {
  const row = {
    clause: "F1 injected errors",
    tier: "faults" as const,
    leg: at.leg,
    library: at.library,
    seconds: (performance.now() - at.started) / 1000,
  };
  if ("skip" in report) return { ...row, status: "SKIP", reason: report.skip, judged: 0 };
  const checks = report.failures.map((f) =>
    `${f.program || "the store"}: ${f.state}: ${f.problems[0] ?? f.kind}`
  );
  // Only the suite failed (runs its model cannot follow): an ERROR, never a verdict.
  const unjudged = checks.length > 0 && report.failures.every((f) => f.harness);
  return {
    ...row,
    status: unjudged ? "ERROR" : checks.length ? "FAIL" : report.runs ? "PASS" : "FAIL",
    ...(checks.length
      ? { reason: `${checks.length} problem(s) in the sweep's programs under faults: ${checks[0]}` }
      : report.runs
      ? {}
      : { reason: "no fault was injected in the sweep's programs: nothing judged" }),
    ...(checks.length ? { checks: checks.slice(0, 12), replay: at.replay } : {}),
    ...(report.kept ? { evidence: report.kept } : {}),
    judged: report.runs,
    figures: {
      programs: report.programs,
      runs: report.runs,
      states: report.states,
      resumes: report.resumes.run,
      ...report.figures,
    },
  };
}

/**
 * Runs one library's share of a tier in this process (whose SQLite library it must be, and
 * whose environment it sets: run it in a process of its own, `children/library.ts`).
 *
 * @param request What to run.
 * @param log Progress lines.
 * @returns The outcomes and the reports behind them.
 */
export function runLibrary(
  request: LibraryRequest,
  log: (line: string) => void,
): Promise<LibraryResult> {
  return withEnv({ CELLS_EVIDENCE_DIR: request.evidenceDir }, () => {
    if (request.tier === "sweep") return pointsShare(request, log);
    if (request.tier === "powerloss-cells") return cellsShare(request, log);
    if (request.tier === "faults") return faultsShare(request, log);
    return callsShare(request, log);
  });
}
