/**
 * The recorded-call sweep under injected faults: every program the sweep runs (the
 * bounded sequences of one operation and the clause programs the store supports) is run
 * again with one of its calls failed by the recorder — a full disk, an I/O error on a
 * write, a short write, a failed sync, a failed read, a journal or WAL that cannot grow
 * (`cells/faults/fault_cases.ts`) — at every call of that kind (quick: a seeded slice).
 * Each run is judged by the sweep's oracle on the files it left and on the two power-loss
 * states that follow it (the synced writes only, every write kept; a write pending at a
 * failed sync is lost even when a later sync succeeded): the failed operation absent or
 * whole, every acknowledged result kept, the clause, invariants and integrity. The run
 * itself must throw a typed error, never hang or die; a sound state left by a fault is
 * continued by a fresh process without faults, as a store is once space returns.
 *
 * @example
 * ```ts ignore
 * import { sweepFaults } from "./faults.ts";
 * const target = new URL("../../../cells/reference_target.ts", import.meta.url).href;
 * const report = await sweepFaults({ target, seed: 1, quick: true });
 * if (!("skip" in report)) console.log(report.runs, report.failures.length);
 * ```
 *
 * @module
 */
import { stderrLine } from "../../../internal/stderr_line.ts";
import { join } from "node:path";
import { buildRecorder } from "../../../recorder/build.ts";
import { powerLossStates } from "../../../recorder/crash_states.ts";
import { type FileSet, readFolder } from "../../../recorder/image.ts";
import { injectedFaults, readLog, type RecorderLog } from "../../../recorder/log.ts";
import { recorderEnv } from "../../../recorder/record.ts";
import { endWithin, recordedEnv, spawnRecorded } from "../../../harness/recorded_child.ts";
import type { LegName } from "../../../harness/legs.ts";
import { seededRandom } from "../../../harness/seeded_random.ts";
import { sqliteLibraryPath } from "../../../session_db/sqlite/database.ts";
import { GENERIC_ERRORS } from "../../../cells/contract/typed.ts";
import {
  callsOf,
  failOptions,
  FAULT_CASES,
  type FaultCase,
  nextCall,
} from "../../../cells/faults/fault_cases.ts";
import { acksOf, readLines, record, runArgs, startRecording } from "./record.ts";
import { parseProgram, type ProgramOp } from "../core/program.ts";
import type { Ack } from "../core/oracle.ts";
import { SWEEP_CHILD } from "../core/state_child.ts";
import type { CallFailure } from "../core/types.ts";
import { pool, programsFor } from "./plan.ts";
import { seedFailure } from "./report.ts";
import type { CallCandidate } from "./resume.ts";
import {
  clauseOf,
  judge,
  replay,
  resumeAll,
  resumeCandidate,
  runFailure,
  type Setting,
  setting,
  unfollowedFailure,
} from "./setting.ts";

/** A faulted run that has not ended after this long hung on its fault. */
export const FAULT_RUN_DEADLINE_MS = 20_000;

/** The (fault, call) pairs quick mode runs per program, taking the cases in turn. */
const QUICK_PICKS = 2;

/**
 * Options of {@linkcode sweepFaults}.
 *
 * @example
 * ```ts
 * import type { FaultSweepOptions } from "./faults.ts";
 * const options: FaultSweepOptions = { target: "my_target.ts", leg: "wal", seed: 1, quick: true };
 * ```
 */
export interface FaultSweepOptions {
  /** The target specifier. */
  target: string;
  /** The leg (default: `default`). */
  leg?: LegName;
  /** The seed of the message texts and of the quick slice. */
  seed: number;
  /** A seeded slice: two faults per program, cycling through the cases, at a seeded call. */
  quick?: boolean;
  /** Only these programs (operations joined by `+`). */
  programs?: readonly string[];
  /** Children in flight at once (default 2). */
  jobs?: number;
  /** How long a faulted run may take before it is killed as hung (default 20 s). */
  deadlineMs?: number;
  /** Progress lines (default none). */
  log?: (line: string) => void;
}

/**
 * What the sweep under faults judged on one leg.
 *
 * @example
 * ```ts ignore
 * import type { FaultSweepReport } from "./faults.ts";
 * declare const report: FaultSweepReport;
 * console.log(`${report.runs} faulted runs of ${report.programs} programs`);
 * ```
 */
export interface FaultSweepReport {
  /** The leg. */
  leg: LegName;
  /** Programs run. */
  programs: number;
  /** Faulted runs where a fault was injected (or the store hung). */
  runs: number;
  /** States judged by the oracle (the files left, the power-loss states). */
  states: number;
  /** Sound states continued by a fresh process, and how many of those failed. */
  resumes: { run: number; failed: number };
  /** Faulted runs per case. */
  figures: Record<string, number>;
  /** What failed (empty: PASS). */
  failures: CallFailure[];
  /** Where a failure's files were kept. */
  kept?: string;
}

/** How one program's faults are picked and run. */
interface FaultPlan {
  quick: QuickSlice;
  deadlineMs: number;
}

/** One faulted run of a program. */
interface FaultedRun {
  fault: FaultCase;
  k: number;
  deadlineMs: number;
  dir: string;
  log: RecorderLog;
  marks: string[];
  hung: boolean;
  status: Deno.CommandStatus;
  stderr: string;
}

/** The sweep child's exit code after it journalled an error it threw. */
const THREW_EXIT = 3;

/** Runs `program` with call `k` of `fault` failed, bounded by the deadline. */
async function faultedRun(
  s: Setting,
  program: readonly ProgramOp[],
  at: { fault: FaultCase; k: number; deadlineMs: number },
): Promise<FaultedRun> {
  const dir = Deno.makeTempDirSync({ dir: s.root, prefix: "faulted-" });
  const start = startRecording(s.children, dir);
  const env = recorderEnv({ ...start.options, data: true, ...failOptions(at.fault, at.k) });
  const leg = { name: s.children.leg, library: sqliteLibraryPath() };
  const [mode, ...rest] = runArgs(s.children, program, start);
  const child = spawnRecorded(SWEEP_CHILD, [mode!, s.children.target, ...rest], {
    env: recordedEnv(leg, env),
    stdout: "null",
  });
  const { output, late } = await endWithin(child, at.deadlineMs);
  return {
    fault: at.fault,
    k: at.k,
    deadlineMs: at.deadlineMs,
    dir,
    log: readLog(start.options.log),
    marks: readLines(start.marks),
    hung: late,
    status: { success: output.success, code: output.code, signal: output.signal },
    stderr: stderrLine(new TextDecoder().decode(output.stderr)),
  };
}

/** The quick slice's place in the cases, carried from program to program. */
interface QuickSlice {
  on: boolean;
  /** The next case to pick from (one the program makes calls for). */
  cursor: number;
  random: () => number;
}

/** The (fault, k) pairs of one program: every call of every case, or the quick slice. */
function picksOf(clean: RecorderLog, quick: QuickSlice): { fault: FaultCase; k: number }[] {
  const picks: { fault: FaultCase; k: number }[] = [];
  if (quick.on) {
    // The cases this program can meet, taken in turn across programs: every case is met.
    for (let tried = 0; tried < FAULT_CASES.length && picks.length < QUICK_PICKS; tried++) {
      const fault = FAULT_CASES[quick.cursor % FAULT_CASES.length]!;
      const calls = callsOf(clean, fault);
      if (!calls) {
        quick.cursor++;
        continue;
      }
      picks.push({ fault, k: 1 + Math.floor(quick.random() * calls) });
      quick.cursor++;
    }
    return picks;
  }
  for (const fault of FAULT_CASES) {
    const calls = callsOf(clean, fault);
    for (let k = 1; k <= calls; k = nextCall(k, { quick: false, kind: fault.kind })) {
      picks.push({ fault, k });
    }
  }
  return picks;
}

/** A line of a faulted run's journal: an intent, an acknowledgement, or what it threw. */
interface JournalEntry {
  op: string;
  result?: unknown;
  threw?: string;
  message?: string;
}

/** What a faulted process did wrong before its files are read: hung, died, untyped error. */
function processProblems(run: FaultedRun): string[] {
  const entries = run.marks.flatMap((line) => {
    try {
      return [JSON.parse(line) as JournalEntry];
    } catch {
      return [];
    }
  });
  if (run.hung) {
    // An intent is journalled just before its operation: after an acknowledgement, only
    // the close is left.
    const lastEntry = entries.at(-1);
    const last = lastEntry && "result" in lastEntry ? "close" : lastEntry?.op ?? "open";
    return [`the store hung for ${run.deadlineMs / 1000} s in ${last} after the fault`];
  }
  const threw = entries.find((e) => e.threw !== undefined);
  if (!run.status.success && !(run.status.code === THREW_EXIT && threw)) {
    const how = run.status.signal ? `signal ${run.status.signal}` : `exit ${run.status.code}`;
    return [`the store's process died (${how}) instead of throwing: ${run.stderr}`];
  }
  // The error thrown, and a ghost's refusal `faultedAcks` takes for the fault's.
  const errors = entries.flatMap((e) => {
    if (e.threw !== undefined) return [{ op: e.op, name: e.threw, message: e.message }];
    const refused = e.op === "ghost" && "result" in e && isRefusal(e.result);
    const name = (e.result as { name?: string | null } | null)?.name;
    return refused && name ? [{ op: e.op, name, message: undefined }] : [];
  });
  return errors.filter((e) => GENERIC_ERRORS.has(e.name)).map((e) =>
    `${e.op} threw an untyped ${e.name}${e.message !== undefined ? `: ${e.message}` : ""}`
  );
}

/**
 * The acknowledgements as the oracle judges them under a fault: a refused append to a
 * missing session (`ghost`) may be refused for the fault instead (a storage error where
 * the uncrashed run met "no such session"), which is the fault's refusal, not an
 * acknowledgement: the run ends there (a refusal changes nothing either way), and its
 * error's type is judged with the errors thrown (an untyped one fails there, once).
 */
function faultedAcks(acks: readonly Ack[]): Ack[] {
  const refused = acks.findIndex((a) => a.op === "ghost" && isRefusal(a.result));
  return refused === -1 ? [...acks] : acks.slice(0, refused);
}

/** A ghost's answer that refused the append, typed or not (the type is judged apart). */
function isRefusal(result: unknown): boolean {
  const answer = (result as { answer?: string } | null)?.answer;
  return answer === "refused" || answer === "untyped";
}

/** Judges one faulted run: the process, the files it left, the power-loss states after it. */
async function judgeRun(
  s: Setting,
  program: readonly ProgramOp[],
  run: FaultedRun,
): Promise<{ failures: CallFailure[]; states: number; candidate?: CallCandidate }> {
  const name = program.join("+");
  const where = `${run.fault.name} at call ${run.k} (${injectedFaults(run.log)[0] ?? "hung"})`;
  const failure = (state: string, operation: number, problems: string[]): CallFailure => ({
    program: name,
    call: run.k,
    operation,
    clause: operation < 0 ? "injected errors" : clauseOf(program, operation),
    state: `${where}, ${state}`,
    kind: operation < 0 ? "run" : "state",
    problems,
    replay: replay(s, name, run.k),
    evidence: run.dir,
  });
  const failures: CallFailure[] = [];
  const early = processProblems(run);
  if (early.length) failures.push(failure("the faulted process", -1, early));
  if (run.hung) return { failures, states: 0 };
  const states: { files: FileSet; acks: readonly string[]; label: string }[] = [
    { files: readFolder(join(run.dir, "db")), acks: run.marks, label: "the files left" },
  ];
  let n = 0;
  for (
    const state of powerLossStates(run.log, {
      profile: "ext4-ordered",
      baseline: s.children.templateFiles,
      lastInstants: 1,
    })
  ) {
    if (n++ === 2) break; // the synced-only state and the everything-kept one
    states.push({ files: state.files, acks: state.acks, label: `a power loss after (${n})` });
  }
  let candidate: CallCandidate | undefined;
  for (const [i, state] of states.entries()) {
    const acks = faultedAcks(acksOf(state.acks));
    const key = `${name}\0${run.fault.name}\0${run.k}\0${i}`;
    const verdict = await s.cache.check(
      { files: state.files, key, label: `${name}: ${where}, ${state.label}` },
      `${name}\0${JSON.stringify(acks)}`,
      (dir) => judge(s, { program, dir, acks }),
    );
    if (verdict.problems.length) {
      failures.push(failure(state.label, acks.length, verdict.problems));
    } else if (i === 0) {
      candidate = resumeCandidate(program, {
        acks: acks.length,
        verdict,
        raw: state.files,
        number: run.k,
        state: { label: `${where}, the files left` },
      });
    }
  }
  return { failures, states: states.length, ...(candidate ? { candidate } : {}) };
}

/** Records a program cleanly (its calls counted), then runs and judges each fault. */
async function faultProgram(
  s: Setting,
  program: readonly ProgramOp[],
  plan: FaultPlan,
): Promise<
  { failures: CallFailure[]; candidates: CallCandidate[]; runs: FaultedRun[]; states: number }
> {
  const clean = await record(s.children, program, {
    dir: Deno.makeTempDirSync({ dir: s.root, prefix: "clean-" }),
  });
  if (!clean.run.status.success) {
    const failure = runFailure(s, program, {
      state: "the run without a fault",
      problems: [`the run without a fault failed: ${clean.run.stderr}`],
      clause: "injected errors",
    });
    return { failures: [failure], candidates: [], runs: [], states: 0 };
  }
  const cleanLog = readLog(clean.log);
  const unfollowed = unfollowedFailure(s, program, {
    state: "the run without a fault",
    log: cleanLog,
    dir: clean.dir,
    clause: "injected errors",
  });
  if (unfollowed) return { failures: [unfollowed], candidates: [], runs: [], states: 0 };
  const picks = picksOf(cleanLog, plan.quick);
  Deno.removeSync(clean.dir, { recursive: true });
  const runs = (await pool(
    picks,
    s.options.jobs ?? 2,
    (pick) => faultedRun(s, program, { ...pick, deadlineMs: plan.deadlineMs }),
  ))
    .filter((run) => {
      const judged = run.hung || injectedFaults(run.log).length > 0;
      if (!judged) Deno.removeSync(run.dir, { recursive: true });
      return judged;
    });
  const failures: CallFailure[] = [];
  const candidates: CallCandidate[] = [];
  let states = 0;
  for (const run of runs) {
    const judged = await judgeRun(s, program, run);
    states += judged.states;
    failures.push(...judged.failures);
    if (judged.candidate) candidates.push(judged.candidate);
    if (!judged.failures.length) Deno.removeSync(run.dir, { recursive: true });
  }
  return { failures, candidates, runs, states };
}

/**
 * The recorded-call sweep's programs under injected faults, on the SQLite library this
 * process loaded (run it in a library's process of its own, as the tiers do).
 *
 * @param options Target, leg, seed, quick, programs, jobs.
 * @returns The report, or why it cannot run here (a SKIP, never a pass).
 * @example
 * ```ts ignore
 * import { sweepFaults } from "./faults.ts";
 * const report = await sweepFaults({ target: "my_target.ts", leg: "wal", seed: 1 });
 * if (!("skip" in report)) for (const f of report.failures) console.log(f.state, f.problems[0]);
 * ```
 */
export async function sweepFaults(
  options: FaultSweepOptions,
): Promise<FaultSweepReport | { skip: string }> {
  const log = options.log ?? (() => {});
  const leg = options.leg ?? "default";
  const built = await buildRecorder();
  if (!built.ok) return { skip: built.reason };
  const seeded = await setting({ ...options, leg, resumes: 1 }, built.path);
  const report: FaultSweepReport = {
    leg,
    programs: 0,
    runs: 0,
    states: 0,
    resumes: { run: 0, failed: 0 },
    figures: {},
    failures: [],
  };
  if ("failed" in seeded) {
    report.failures.push(seedFailure(seeded.failed, ""));
    return report;
  }
  const s: Setting = { ...seeded, mode: "faults" };
  const programs = options.programs?.map(parseProgram) ?? programsFor(s.methods, 1);
  report.programs = programs.length;
  log(`faults: ${programs.length} programs on leg ${leg}, seed ${options.seed}`);
  const quick: QuickSlice = {
    on: options.quick ?? false,
    cursor: 0,
    random: seededRandom(options.seed),
  };
  const candidates: CallCandidate[][] = [];
  for (const program of programs) {
    const done = await faultProgram(s, program, {
      quick,
      deadlineMs: options.deadlineMs ?? FAULT_RUN_DEADLINE_MS,
    });
    report.runs += done.runs.length;
    report.states += done.states;
    for (const run of done.runs) {
      report.figures[run.fault.name] = (report.figures[run.fault.name] ?? 0) + 1;
    }
    report.failures.push(...done.failures);
    candidates.push(done.candidates);
    for (const f of done.failures.slice(0, 2)) {
      log(`  FAIL ${f.program} (${f.state}): ${f.problems[0]}`);
    }
  }
  report.failures.push(...await resumeAll(s, candidates));
  report.resumes = { run: s.resumes.run, failed: s.resumes.failed };
  s.cache.close();
  if (report.failures.length) report.kept = s.root;
  else Deno.removeSync(s.root, { recursive: true });
  return report;
}
