/**
 * Fault clause F1, injected errors: the recorder fails the k-th write, sync or read of
 * the fault program (a session, single appends, a batch) instead of making it, for every
 * k of each kind of fault, and judges what the store did. A failed operation throws a
 * typed error; a store that hangs fails with the call that hung it; a fresh process
 * finds every acknowledged write exactly once (now and after a power loss that follows
 * the error, where the writes pending at a failed sync are lost even when a later sync
 * succeeded), and its next append is kept or refused with a typed error.
 *
 * @example
 * ```ts ignore
 * import { injectedErrorsClause } from "./injected_errors.ts";
 * import { currentLeg } from "../../harness/legs.ts";
 * const verdict = await injectedErrorsClause.run({
 *   target: new URL("../reference_target.ts", import.meta.url).href,
 *   leg: currentLeg(),
 *   seed: 1,
 *   quick: true,
 *   dir: Deno.makeTempDirSync(),
 *   recorder: { path: "/repo/.cache/recorder/abc/libfsrecorder.so" },
 * });
 * console.log(verdict.status);
 * ```
 *
 * @module
 */
import { join } from "node:path";
import { powerLossStates, unfollowedRun } from "../../recorder/crash_states.ts";
import { writeImage } from "../../recorder/image.ts";
import { injectedFaults } from "../../recorder/log.ts";
import { pool } from "../../internal/pool.ts";
import { seededRandom } from "../../harness/seeded_random.ts";
import { type FaultRun, faultRun, RUN_DEADLINE_MS } from "./_fault_run.ts";
import { callsOf, FAULT_CASES, type FaultCase, nextCall } from "./fault_cases.ts";
import { afterProblems, parseMarks, processProblems, promisedBy, stateProblems } from "./_judge.ts";
import { type ReadJob, type ReadResult, readStates } from "./_reads.ts";
import type { FaultClause, FaultClauseOptions, FaultVerdict } from "./types.ts";
import type { FaultMark } from "./_program.ts";
import { legSkip } from "./_lives.ts";
import { observeJournalMode } from "../../harness/legs.ts";

/** The most calls of one kind a run is failed at (a program that makes more is sampled). */
const MAX_K = 400;
/**
 * Runs whose states one reader process reads, each state opened afresh (a process per
 * run made the readers most of F1's time).
 */
const READS_PER_READER = 8;
/** The long program's appends, and its sampled calls per kind of fault (quick, full). */
const LONG_APPENDS = 40;
const LONG_SAMPLES = { quick: 1, full: 4 };

type Recorded = FaultClauseOptions & { recorder: { path: string } };

/** One faulted run and where it stands. */
interface Judged {
  fault: FaultCase;
  k: number;
  run: FaultRun;
  injected: string[];
  /** A run of the long program. */
  long?: boolean;
}

/** Runs one case for k = 1, 2, … until its k-th call is never made. */
async function runCase(options: Recorded, fault: FaultCase): Promise<Judged[]> {
  const judged: Judged[] = [];
  for (let k = 1; k <= MAX_K; k = nextCall(k, { quick: options.quick, kind: fault.kind })) {
    const dir = Deno.makeTempDirSync({ dir: options.dir, prefix: "run-" });
    const run = await faultRun(options, { dir, fault, k });
    const injected = injectedFaults(run.log);
    if (!injected.length && !run.hung) {
      Deno.removeSync(dir, { recursive: true });
      break;
    }
    judged.push({ fault, k, run, injected });
  }
  return judged;
}

/**
 * The sampled long run: the program with many appends, each kind of fault at a few calls
 * chosen by the seed (a store whose trouble starts only once its file has grown).
 */
async function runLong(options: Recorded): Promise<Judged[]> {
  const mk = (prefix: string) => Deno.makeTempDirSync({ dir: options.dir, prefix });
  const clean = await faultRun(options, { dir: mk("long-clean-"), k: 0, appends: LONG_APPENDS });
  Deno.removeSync(clean.dir, { recursive: true });
  const random = seededRandom(options.seed);
  const samples = options.quick ? LONG_SAMPLES.quick : LONG_SAMPLES.full;
  const picks = FAULT_CASES.flatMap((fault) => {
    const calls = callsOf(clean.log, fault);
    return calls
      ? Array.from({ length: samples }, () => ({ fault, k: 1 + Math.floor(random() * calls) }))
      : [];
  });
  const judged = await pool(picks, 2, async ({ fault, k }): Promise<Judged | undefined> => {
    const run = await faultRun(options, { dir: mk("long-run-"), fault, k, appends: LONG_APPENDS });
    const injected = injectedFaults(run.log);
    if (!injected.length && !run.hung) {
      Deno.removeSync(run.dir, { recursive: true });
      return undefined;
    }
    return { fault, k, run, injected, long: true };
  });
  return judged.filter((j) => j !== undefined);
}

/** The read jobs of a run: its files as left (with an append after), and power-loss states. */
function readJobs(j: Judged, seed: number): { jobs: ReadJob[]; acks: FaultMark[][] } {
  const jobs: ReadJob[] = [{ db: join(j.run.dir, "db", "store.db"), append: afterText(j, seed) }];
  const acks: FaultMark[][] = [j.run.marks];
  let n = 0;
  for (const state of powerLossStates(j.run.log, { profile: "ext4-ordered", lastInstants: 1 })) {
    if (n === 2) break; // the synced-only state and the everything-kept one
    const folder = join(j.run.dir, `power-loss-${n++}`);
    writeImage(state.files, folder);
    jobs.push({ db: join(folder, "store.db") });
    acks.push(parseMarks(state.acks));
  }
  return { jobs, acks };
}

function afterText(j: Judged, seed: number): string {
  return `fault-${seed}-after-${j.fault.kind}-${j.k}${j.long ? "-long" : ""}`;
}

/** Judges one run from its reads; each problem names the fault that led to it. */
function judgeRun(
  j: Judged,
  reads: { jobs: ReadJob[]; acks: FaultMark[][]; results: ReadResult[] },
  seed: number,
): string[] {
  const where = `${j.fault.name} at call ${j.k}${j.long ? " of the long run" : ""} (${
    j.injected[0] ?? "nothing injected"
  })`;
  const problems = processProblems(j.run, RUN_DEADLINE_MS);
  for (const [i, result] of reads.results.entries()) {
    const label = i === 0 ? "after the fault" : `after a power loss (state ${i})`;
    const promised = promisedBy(reads.acks[i]!);
    problems.push(...stateProblems(result, promised).map((p) => `${label}: ${p}`));
    if (i === 0) problems.push(...afterProblems(result, afterText(j, seed)));
  }
  return problems.map((p) => `${where}: ${p}`);
}

/** Runs F1 on one leg. */
async function run(options: FaultClauseOptions): Promise<FaultVerdict> {
  if ("skip" in options.recorder) {
    return { status: "SKIP", reason: options.recorder.skip, judged: 0 };
  }
  const recorded = options as Recorded;
  const clean = await faultRun(recorded, {
    dir: Deno.makeTempDirSync({ dir: options.dir, prefix: "clean-" }),
    k: 0,
  });
  if (!clean.log.pids.length) {
    return {
      status: "SKIP",
      reason: "the store's children did not load the recorder (LD_PRELOAD): " +
        "run them as a Linux/glibc Deno process with cc available (deno task recorder)",
      judged: 0,
    };
  }
  const opened = clean.marks.find((m) => m.op === "open" && m.at !== "intent");
  if (!clean.status.success || opened?.at !== "ack") {
    const why = opened?.at === "threw" ? `${opened.name}: ${opened.message}` : clean.stderr;
    return { status: "FAIL", reason: `the store cannot run the fault program: ${why}`, judged: 0 };
  }
  // A run the model cannot follow judges nothing: the suite says so (an ERROR).
  const unfollowed = unfollowedRun(clean.log, { baseline: new Map(), dir: join(clean.dir, "db") });
  if (unfollowed) {
    return {
      status: "ERROR",
      reason: `the run without a fault cannot be judged: ${unfollowed} (kept in ${clean.dir})`,
      judged: 0,
    };
  }
  const db = join(clean.dir, "db", "store.db");
  const skip = legSkip(options.leg, [observeJournalMode(db, "after the clean run", true)]);
  if (skip) return skip;
  const runs = (await pool(FAULT_CASES, 2, (fault) => runCase(recorded, fault))).flat();
  runs.push(...await runLong(recorded));
  const checks: string[] = [];
  const figures: Record<string, number> = {};
  const batches = Array.from(
    { length: Math.ceil(runs.length / READS_PER_READER) },
    (_, i) => runs.slice(i * READS_PER_READER, (i + 1) * READS_PER_READER),
  );
  // A store whose reader hung once (it never opens what a fault left) would hang every
  // reader after it, each for the whole deadline: its verdict is already a FAIL.
  const unread = { runs: 0, after: "" };
  await pool(batches, 2, async (batch) => {
    if (unread.after) {
      unread.runs += batch.length;
      return;
    }
    const reads = batch.map((j) => ({ j, ...readJobs(j, options.seed) }));
    const results = await readStates(options, reads.flatMap((r) => r.jobs));
    if ("hung" in results) unread.after ||= `${batch[0]!.fault.name} at call ${batch[0]!.k}`;
    let at = 0;
    for (const { j, jobs, acks } of reads) {
      figures[j.fault.name] = (figures[j.fault.name] ?? 0) + 1;
      const mine = "failed" in results ? results : results.slice(at, at += jobs.length);
      const problems = "failed" in mine
        ? [`${j.fault.name} at call ${j.k}: ${mine.failed}`]
        : judgeRun(j, { jobs, acks, results: mine }, options.seed);
      checks.push(...problems);
      if (!problems.length) Deno.removeSync(j.run.dir, { recursive: true });
    }
  });
  if (unread.runs) {
    checks.push(
      `${unread.runs} faulted run(s) not read back: the reader of ${unread.after} hung, and so would theirs`,
    );
  }
  return verdictOf(checks, runs.length - unread.runs, figures);
}

function verdictOf(
  checks: string[],
  judged: number,
  figures: Record<string, number>,
): FaultVerdict {
  if (!judged) return { status: "FAIL", reason: "no fault was injected: nothing judged", judged };
  if (!checks.length) return { status: "PASS", judged, figures };
  // A few lines of each kind of fault, so that every kind that broke the store shows.
  const kept: string[] = [];
  for (const fault of FAULT_CASES) {
    kept.push(...checks.filter((c) => c.startsWith(`${fault.name} at`)).sort().slice(0, 6));
  }
  return {
    status: "FAIL",
    reason: `${checks.length} problem(s) after injected faults: ${kept[0]}`,
    checks: kept,
    judged,
    figures,
  };
}

/** Fault clause F1: injected write, sync and read errors. */
export const injectedErrorsClause: FaultClause = {
  id: "F1",
  name: "F1 injected errors",
  run,
};
