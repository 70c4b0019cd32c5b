/**
 * The recorded-call sweep: crash states for any store, without its help, in two modes.
 * Each program (the bounded sequences of the sweep's operations the store supports)
 * runs once, uncrashed, under the LD_PRELOAD recorder, its intents and acknowledgements
 * written to the recorder's mark file so that they sit in the log between the calls
 * around them. From that one log:
 *
 * - `crash`: the state a SIGKILL before each recorded call k leaves (the page cache
 *   keeps every completed call: the log's first k-1 calls applied to the start state),
 *   cross-checked by real children SIGKILLed before sampled calls (`FSREC_CRASH_AT`);
 * - `power-loss`: the states a power loss at each sync point may leave under a
 *   persistence profile (`recorder/crash_states.ts`), the torn last writes enumerated.
 *
 * Every state is checked in-process by the sweep's oracle (`_oracle.ts`: the interrupted
 * operation absent or complete, acknowledged results kept, the clause, invariants,
 * integrity, recovery determinism), a verdict reused for states recovered to identical
 * files (`recorder/recovered.ts`). Then a sample of the recovered states is continued
 * by a fresh process and judged again (`_resume.ts`). A failing state is shrunk to the
 * shortest program and the earliest state that still fail, with its replay command.
 *
 * @example
 * ```ts ignore
 * import { sweepCalls } from "./calls.ts";
 * const target = new URL("../../../cells/reference_target.ts", import.meta.url).href;
 * const report = await sweepCalls({ target, seed: 1, mode: "power-loss", programs: ["append"] });
 * if (!("skip" in report)) console.log(report.states, report.torn.states, report.resumes.run);
 * ```
 *
 * @module
 */
import { join } from "node:path";
import { buildRecorder } from "../../../recorder/build.ts";
import {
  type CrashState,
  killStates,
  powerLossStates,
  type PowerLossStats,
} from "../../../recorder/crash_states.ts";
import type { FileSet } from "../../../recorder/image.ts";
import { readLog, type RecorderLog } from "../../../recorder/log.ts";
import { powerLossPattern } from "../../../cells/power_loss/pattern.ts";
import { isHarnessError } from "../../../harness/harness_error.ts";
import { journalModeOf, observeJournalMode } from "../../../harness/legs.ts";
import { acksOf, readLines, record, type Recording } from "./record.ts";
import { CLAUSES } from "../core/oracle.ts";
import { judging } from "../../../internal/judging_beacon.ts";
import { alsoJudged } from "../core/clause_checks.ts";
import { parseProgram, type ProgramOp } from "../core/program.ts";
import { failedToSeed, finalReport } from "./report.ts";
import { programsFor } from "./plan.ts";
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
  type StateVerdict,
  tally,
  unfollowedFailure,
  unjudgedFailure,
} from "./setting.ts";
import type { CallFailure, CallSweepOptions, CallSweepReport } from "../core/types.ts";

export type { CallFailure, CallSweepOptions, CallSweepReport, ClauseTally } from "../core/types.ts";
export { programsFor } from "./plan.ts";

/** The states of a recording, in the sweep's mode; power-loss counts go to `stats`. */
function statesOf(
  s: Setting,
  log: RecorderLog,
  stats: PowerLossStats,
): Iterable<CrashState & { k?: number }> {
  if (s.mode === "crash") return killStates(log, s.children.templateFiles);
  return powerLossStates(log, {
    profile: s.options.profile ?? "posix",
    baseline: s.children.templateFiles,
    samples: s.options.subsets ?? 12,
    seed: s.options.seed,
    stats,
    ...(s.options.instants !== undefined ? { lastInstants: s.options.instants } : {}),
  });
}

/** A copy of a state's files (they are made lazily, from a model that moves on). */
function copied(files: FileSet): FileSet {
  return new Map([...files].map(([name, bytes]) => [name, bytes.slice()]));
}

/** Checks every state of one recorded program; its failures and resume candidates. */
async function checkProgram(
  s: Setting,
  program: readonly ProgramOp[],
  recorded: { recording: Recording; log: RecorderLog },
): Promise<{ failures: CallFailure[]; candidates: CallCandidate[]; last: number }> {
  const name = program.join("+");
  const failures: CallFailure[] = [];
  const candidates: CallCandidate[] = [];
  const stats: PowerLossStats = { instants: 0, tearable: 0, torn: 0 };
  const seen = new Set<StateVerdict>();
  // A power loss's known pattern, read from the recorded calls (never from a message).
  const { recording, log } = recorded;
  const pattern = s.mode === "power-loss"
    ? powerLossPattern(log, join(recording.dir, "db", "store.db"))
    : undefined;
  const started = performance.now();
  let n = 0;
  for (const state of statesOf(s, log, stats)) {
    const number = state.k ?? ++n;
    n = number;
    if (s.options.call !== undefined && number !== s.options.call) continue;
    const acks = acksOf(state.acks);
    const clause = tally(s, clauseOf(program, acks.length));
    s.counts.states++;
    for (const judged of [clause, ...alsoJudged(program, s.methods).map((c) => tally(s, c))]) {
      judged.states++;
      if (state.torn) judged.torn++;
    }
    if (s.mode === "crash") {
      s.observations.push(journalModeOf(
        state.files.get("store.db"),
        state.files.get("store.db-journal"),
        `${name}: before call ${number}`,
      ));
    }
    let raw: FileSet | undefined;
    const label = `${name}: ${state.label}`;
    const named = {
      get files() {
        return state.files;
      },
      key: state.key,
      label,
    };
    const verdict = await s.cache.check(named, `${name}\0${JSON.stringify(acks)}`, (dir) => {
      raw = copied(state.files);
      return judge(s, { program, dir, acks });
    });
    if (verdict.problems.length) {
      clause.failures++;
      for (const extra of alsoJudged(program, s.methods)) {
        if (verdict.problems.some((p) => p.startsWith(`${extra}: `))) tally(s, extra).failures++;
      }
      failures.push({
        program: name,
        call: number,
        operation: acks.length,
        clause: clauseOf(program, acks.length),
        state: state.label,
        kind: "state",
        problems: verdict.problems,
        replay: replay(s, name, number),
        ...(pattern ? { pattern } : {}),
      });
    } else if (raw && !seen.has(verdict)) {
      seen.add(verdict);
      candidates.push(resumeCandidate(program, { acks: acks.length, verdict, raw, number, state }));
    }
  }
  s.counts.seconds += (performance.now() - started) / 1000;
  s.torn.states += stats.torn;
  s.torn.tearable += stats.tearable;
  s.torn.instants += stats.instants;
  if (s.mode === "power-loss" && stats.tearable > 0 && stats.torn === 0) {
    failures.push(untornFailure(s, name, stats));
  }
  return { failures, candidates, last: n };
}

/** A power-loss run whose unsynced writes made no torn state: the enumeration failed. */
function untornFailure(s: Setting, name: string, stats: PowerLossStats): CallFailure {
  return {
    program: name,
    call: 0,
    operation: -1,
    clause: "torn writes",
    state: "every instant",
    kind: "run",
    harness: true,
    problems: [
      `torn writes: ${stats.tearable} instants had an unsynced write but no torn state was made (the enumeration failed)`,
    ],
    replay: replay(s, name, 1),
  };
}

/** The crash mode's cross-check: real children SIGKILLed before sampled calls, judged alike. */
async function crossCheck(
  s: Setting,
  program: readonly ProgramOp[],
  dir: string,
  last: number,
): Promise<CallFailure[]> {
  const name = program.join("+");
  const failures: CallFailure[] = [];
  const kills = s.options.call !== undefined ? 1 : s.options.kills ?? 1;
  for (let j = 0; j < kills && last > 1; j++) {
    const k = s.options.call ?? 1 + Math.floor(((j + 0.5) * (last - 1)) / kills);
    const killDir = join(dir, `kill-${k}`);
    const killed = await record(s.children, program, { dir: killDir, crashAt: k });
    s.counts.children++;
    const recorded = readLog(killed.log).records.filter((r) => r.counted).length;
    const acks = acksOf(readLines(killed.marks));
    let problems: string[];
    if (killed.run.status.signal !== "SIGKILL") {
      problems = [
        `child: expected SIGKILL before call ${k}, it ended with ${
          killed.run.status.signal ?? `exit ${killed.run.status.code}`
        }: ${killed.run.stderr}`,
      ];
    } else if (recorded !== k - 1) {
      problems = [`child: killed before call ${k} but ${recorded} calls were recorded`];
    } else {
      const db = join(killDir, "db", "store.db");
      const what = `${name}: a child killed before call ${k}`;
      s.observations.push(observeJournalMode(db, what));
      const dir = join(killDir, "db");
      problems = (await judging(what, () => judge(s, { program, dir, acks }))).problems;
    }
    if (problems.length) {
      s.counts.childFailures++;
      tally(s, clauseOf(program, acks.length)).failures++;
      failures.push({
        program: name,
        call: k,
        operation: acks.length,
        clause: clauseOf(program, acks.length),
        state: `a real child SIGKILLed before call ${k}`,
        kind: "child",
        problems: problems.map((p) => `real SIGKILL child: ${p}`),
        replay: replay(s, name, k),
      });
    }
  }
  return failures;
}

/** Records, checks and continues one program; its failures (kept folder when any). */
async function sweepProgram(
  s: Setting,
  program: readonly ProgramOp[],
  recorded?: Promise<Recording>,
): Promise<{ failures: CallFailure[]; candidates: CallCandidate[] }> {
  const dir = recorded ? undefined : Deno.makeTempDirSync({ dir: s.root, prefix: "program-" });
  const recording = await (recorded ?? record(s.children, program, { dir: dir! }));
  const fail = (problems: string[]): CallFailure[] => [
    runFailure(s, program, { state: "the uncrashed run", problems }),
  ];
  if (!recording.run.status.success) {
    return {
      failures: fail([`the uncrashed run failed: ${recording.run.stderr}`]),
      candidates: [],
    };
  }
  // The uncrashed run's replay must give the files it left, or the states miss calls.
  const log = readLog(recording.log);
  const unfollowed = unfollowedFailure(s, program, {
    state: "the uncrashed run",
    log,
    dir: recording.dir,
  });
  if (unfollowed) return { failures: [unfollowed], candidates: [] };
  let checked: Awaited<ReturnType<typeof checkProgram>>;
  try {
    checked = await checkProgram(s, program, { recording, log });
  } catch (error) {
    if (!isHarnessError(error)) throw error;
    // The model lost the run part-way (a ModelError): nothing more is judged of it.
    const why = (error as Error).message;
    return {
      failures: [
        unjudgedFailure(s, program, { state: "the recorded run", why, dir: recording.dir }),
      ],
      candidates: [],
    };
  }
  const failures = [...checked.failures];
  if (s.mode === "crash") {
    failures.push(...await crossCheck(s, program, recording.dir, checked.last));
  }
  if (!failures.length) Deno.removeSync(recording.dir, { recursive: true });
  return { failures, candidates: checked.candidates };
}

/** Shrinks a failure: the shortest program (operations after the interrupted one dropped, then each earlier one) still failing, then its earliest failing state. */
async function shrink(s: Setting, failure: CallFailure): Promise<CallFailure> {
  const { call: _call, ...rest } = s.options;
  const quiet: Setting = { ...s, options: { ...rest, kills: 0 } };
  const full = parseProgram(failure.program);
  let program = full.slice(0, failure.operation + 1);
  let best = failure;
  const failing = async (candidate: ProgramOp[]) =>
    (await sweepProgram(quiet, candidate)).failures[0];
  const first = program.length ? await failing(program) : undefined;
  if (first) best = first;
  else program = full;
  for (let i = 0; i < program.length - 1;) {
    const candidate = [...program.slice(0, i), ...program.slice(i + 1)];
    const found = await failing(candidate);
    if (found) {
      program = candidate;
      best = found;
    } else i++;
  }
  return best;
}

/**
 * The recorded-call sweep on the SQLite library this process loaded: every state of
 * every program in the mode, checked in-process, a sample continued after recovery.
 *
 * @param options Target, leg, mode, seed, programs, cross-check children, resumes.
 * @returns The report, or why it cannot run here (a SKIP, never a pass).
 */
export async function sweepCalls(
  options: CallSweepOptions,
): Promise<CallSweepReport | { skip: string }> {
  const log = options.log ?? console.log;
  const built = await buildRecorder();
  if (!built.ok) return { skip: built.reason };
  const s = await setting(options, built.path);
  const mode = options.mode ?? "crash";
  const leg = options.leg ?? "default";
  if ("failed" in s) return failedToSeed(options, mode, s.failed);
  const chosen = options.programs?.map(parseProgram) ??
    programsFor(s.methods, options.maxLength ?? 2, options.cells);
  log(
    `sweep --syscalls${
      mode === "power-loss" ? " --power-loss" : ""
    }: ${chosen.length} programs on leg ${leg}, seed ${options.seed}; target ${options.target}`,
  );
  const jobs = options.jobs ?? 2;
  // Record ahead (children, in parallel); check in order (in-process, one scratch folder).
  const dirs = chosen.map(() => Deno.makeTempDirSync({ dir: s.root, prefix: "program-" }));
  const recordings = new Map<number, Promise<Recording>>();
  let ahead = 0;
  const recordAhead = (upTo: number) => {
    for (; ahead < Math.min(upTo, chosen.length); ahead++) {
      recordings.set(ahead, record(s.children, chosen[ahead]!, { dir: dirs[ahead]! }));
    }
  };
  const failures: CallFailure[] = [];
  const candidates: CallCandidate[][] = [];
  for (const [i, program] of chosen.entries()) {
    recordAhead(i + jobs);
    const judged = new Set([
      ...program.map((op) => CLAUSES[op]),
      ...alsoJudged(program, s.methods),
    ]);
    for (const clause of judged) tally(s, clause).programs++;
    const found = await sweepProgram(s, program, recordings.get(i));
    recordings.delete(i);
    for (const f of found.failures.slice(0, 3)) {
      log(`  FAIL ${f.program} #${f.call} (${f.state}): ${f.problems[0]}`);
    }
    failures.push(...found.failures);
    candidates.push(found.candidates);
  }
  if (options.call === undefined) failures.push(...await resumeAll(s, candidates));
  const shrinkable = failures.find((f) => f.kind === "state" || f.kind === "child");
  if (shrinkable && (options.shrink ?? true) && options.call === undefined) {
    const shrunk = await shrink(s, shrinkable);
    const same = failures.findIndex((f) => f.program === shrunk.program && f.call === shrunk.call);
    if (same !== -1) failures.splice(same, 1);
    failures.unshift(shrunk);
    log(
      `  shrunk: ${shrunk.program} #${shrunk.call}: ${
        shrunk.problems[0]
      }\n  replay: ${shrunk.replay}`,
    );
  }
  s.cache.close();
  if (!failures.length) Deno.removeSync(s.root, { recursive: true });
  else log(`  kept: ${s.root}`);
  return finalReport({ ...s, mode, judged: s.cache.judged }, chosen.length, failures);
}
