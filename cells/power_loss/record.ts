// The power-loss tier's machinery, shared by its four cells: the recorded run (a child
// under the LD_PRELOAD file-system call recorder, SIGKILLed at the acknowledgement
// instant or at a random moment), the crash states a power loss may leave under a named
// persistence profile (recorder/crash_states.ts), the verdict on each state through the
// clause's judge (in-process, reused across states SQLite recovers identically:
// recorder/recovered.ts), and the steps a cell reports. The tier is described in
// power_loss.ts.
import { ok } from "node:assert/strict";
import { basename, join } from "node:path";
import { cpuUsage } from "node:process";
import { countAcks } from "../../harness/ack_journal.ts";
import { type Child, classifyExit, killWhileAlive, reapAll } from "../../harness/child.ts";
import { type LegAudit, legVerdict, observeJournalMode } from "../../harness/legs.ts";
import { runSeed } from "../../harness/seeded_random.ts";
import { waitFor } from "../../harness/wait_for.ts";
import { buildRecorder } from "../../recorder/build.ts";
import {
  type CrashState,
  killEnd,
  powerLossStates,
  type PowerLossStats,
  type Profile,
} from "../../recorder/crash_states.ts";
import { type FileSet, firstDifference, readFolder, writeImage } from "../../recorder/image.ts";
import { judgeableLog, readLog, type RecorderLog } from "../../recorder/log.ts";
import { denoCacheDir, recorderEnv } from "../../recorder/record.ts";
import { RecoveredStates } from "../../recorder/recovered.ts";
import { type StateJudgement, violationsOf } from "../engine/state_check.ts";
import type { Diagnosis } from "../engine/report.ts";
import {
  type PowerLossCandidate,
  type PowerLossResume,
  resumeStates,
  type ResumeTally,
} from "./resume.ts";
import { diagnosis, type PatternId } from "../engine/diagnoses.ts";
import { powerLossPattern } from "./pattern.ts";
import type { PowerLossKill, PowerLossRunOptions } from "./_types.ts";

export type { PowerLossKill, PowerLossOptions, PowerLossRunOptions } from "./_types.ts";
import { declaredPermissions } from "../contract/target_access.ts";
import { spawnFor } from "../engine/run.ts";

/**
 * The verdict on one crash state.
 *
 * @example
 * ```ts
 * import type { StateVerdict } from "./mod.ts";
 * function line(verdict: StateVerdict): string {
 *   const problems = verdict.problems.length ? verdict.problems.join("; ") : "recovered";
 *   return `${verdict.label}: ${verdict.lost} lost, ${problems}`;
 * }
 * ```
 */
export interface StateVerdict {
  /** How the state was made, e.g. `before #12 (sync): subset 101 names 0`. */
  label: string;
  /** Acknowledged operations (before the state's instant) missing from it. */
  lost: number;
  /** Consistency violations (empty when it recovered to a valid store). */
  problems: string[];
}

/**
 * What one recorded run found.
 *
 * @example
 * ```ts
 * import type { PowerLossRun } from "./mod.ts";
 * function held(run: PowerLossRun): boolean {
 *   return run.losingStates === 0 && run.corruptStates === 0 && (run.fidelity ?? null) === null;
 * }
 * ```
 */
export interface PowerLossRun {
  /** The kill. */
  kill: PowerLossKill;
  /** The persistence profile the states were drawn under. */
  profile: Profile;
  /** Acknowledged operations at the kill. */
  acknowledged: number;
  /** Crash states checked. */
  statesChecked: number;
  /** States the judge ran on (the others had the files or recovered files of one of these). */
  statesJudged: number;
  /** The most acknowledged operations missing from one state. */
  lost: number;
  /** States missing an acknowledged operation. */
  losingStates: number;
  /** The first state that lost one, with how many. */
  firstLoss?: string;
  /** Acknowledged operations missing from what the SIGKILL itself left (the page cache). */
  fullLost: number;
  /** States that did not recover to a valid store holding the clause. */
  corruptStates: number;
  /** The first violation seen, with its state. */
  firstProblem?: string;
  /**
   * Whether replaying the log reproduces the files on disk: `null` when it does, a
   * description when not; checked after an `ack` kill only (a random kill can land
   * between a call and its record).
   */
  fidelity?: string | null;
  /** The on-disk journal mode after the run (`not-sqlite` for other stores). */
  onDisk: string;
  /** Whether the leg was honoured, and why not. */
  honoured: { ok: boolean; reason?: string };
  /** The first seed of the random states. */
  seed: number;
  /** The log: records, completed syncs, crash points, bytes torn off its end. */
  log: { records: number; syncs: number; calls: number; tornBytes: number };
  /**
   * The torn last writes judged, and the instants that had an unsynced write to tear
   * (torn states are enumerated at each: none there means the enumeration failed).
   */
  torn: { states: number; tearable: number };
  /** Recovered states continued by a fresh process and judged again. */
  resumes: ResumeTally;
  /** Known failure patterns of its losses, with cause and fix. */
  diagnoses: Diagnosis[];
  /** Seconds spent checking the states, states per second, CPU seconds, images recovered. */
  checking: { seconds: number; statesPerSecond: number; cpuSeconds: number; recovered: number };
  /** Where the run's files are (failing states are kept under `states/`). */
  dir: string;
  /** The durability pattern the log shows at an acknowledgement (attached to a loss). */
  pattern?: PatternId;
}

/** A run's files: the watched database folder, the acknowledgement journal, the log. */
export interface RunFiles {
  db: string;
  dbDir: string;
  acks: string;
  log: string;
  /** The database folder before the writer started. */
  baseline: FileSet;
}

/** Creates the run's database folder and names its files. */
export function runFiles(dir: string): RunFiles {
  const dbDir = join(dir, "db");
  Deno.mkdirSync(dbDir, { recursive: true });
  return {
    dbDir,
    db: join(dbDir, "store.db"),
    acks: join(dir, "acks.jsonl"),
    log: join(dir, "fs.log"),
    baseline: readFolder(dbDir),
  };
}

let built: Promise<{ path?: string; reason?: string }> | undefined;

/**
 * This process's power-loss checking so far (see {@linkcode powerLossTotals}).
 *
 * @example
 * ```ts
 * import { type PowerLossTotals, powerLossTotals } from "./record.ts";
 * const { states, seconds }: PowerLossTotals = powerLossTotals();
 * console.log(`${states} states in ${seconds.toFixed(1)} s`);
 * ```
 */
export interface PowerLossTotals {
  /** Crash states checked. */
  states: number;
  /** States whose files were written out and recovered by SQLite (distinct images). */
  recovered: number;
  /** States the judge ran on (distinct recovered contents). */
  judged: number;
  /** Wall seconds spent checking. */
  seconds: number;
  /** CPU seconds this process spent checking (user and system; the machine may be shared). */
  cpuSeconds: number;
}

const totals: PowerLossTotals = { states: 0, recovered: 0, judged: 0, seconds: 0, cpuSeconds: 0 };

/**
 * The crash states checked by this process's power-loss runs so far, how many were
 * recovered and judged, and the seconds spent (for the tools' `N states in S s` line).
 *
 * @returns A copy of the totals.
 * @example
 * ```ts
 * import { powerLossTotals } from "./record.ts";
 * console.log(powerLossTotals().states); // 0 before any power-loss run
 * ```
 */
export function powerLossTotals(): PowerLossTotals {
  return { ...totals };
}

/**
 * The recorder's library, built once per process; or why this machine has none (not
 * Linux/glibc, no `cc`): the tier then SKIPs with that reason.
 */
export function powerLossRecorder(): Promise<{ path?: string; reason?: string }> {
  built ??= buildRecorder().then(
    (b) => b.ok ? { path: b.path } : { reason: b.reason },
    (error) => ({ reason: error instanceof Error ? error.message : String(error) }),
  );
  return built;
}

/** The writer of a recorded run: a cells' child and its arguments after the target. */
export interface RecordedWriter {
  /** The child script. */
  script: URL;
  /** Its arguments after the target. */
  args: string[];
  /** What its operations are called, in messages (e.g. `appends`). */
  what: string;
  /** Its own environment (e.g. a crash point), after the run's. */
  env?: Record<string, string>;
}

/**
 * Runs the writer (a child of the cells, given the target first) under the recorder until
 * the kill: its own at the acknowledgement instant (a crash point in its environment, or
 * its own count), or the parent's once `minAcknowledged` operations are journaled. The
 * acknowledgement journal is the recorder's mark file, so each acknowledgement sits in
 * the log between the calls around it.
 *
 * @param options The run (leg, target, folder, kill, threshold, deadline, environment).
 * @param files The run's files.
 * @param writer The child, its arguments, what it does, its environment.
 */
export async function recordAndKill(
  options: PowerLossRunOptions & { minAcknowledged: number },
  files: RunFiles,
  writer: RecordedWriter,
): Promise<void> {
  const library = (await powerLossRecorder()).path;
  if (!library) throw new Error(`The power-loss tier needs the recorder: ${(await built)?.reason}`);
  const { leg, target } = options;
  const spawn = spawnFor({
    leg,
    target,
    runDir: options.dir,
    permissions: await declaredPermissions(target),
    ...(options.env ? { env: options.env } : {}),
  });
  const child = spawn(writer.script, writer.args, {
    env: {
      ...writer.env,
      ...recorderEnv({
        library,
        watched: files.dbDir,
        log: files.log,
        data: true,
        mark: files.acks,
        // The run folder holds the child's own journals and stderr; Deno writes its cache.
        ignore: [options.dir, denoCacheDir()],
      }),
    },
  });
  try {
    if (options.kill === "ack") await selfKilled(options, files, child, writer.what);
    else await killedAfter(options, files, child, writer.what);
  } finally {
    await reapAll([child]);
  }
}

/** A measure of progress for a run outside a cell: no run's moves to note. */
const unnoted = <T>(measure: () => T) => measure;

/** Waits for the writer to kill itself at the acknowledgement instant. */
async function selfKilled(
  options: PowerLossRunOptions,
  files: RunFiles,
  child: Child,
  what: string,
): Promise<void> {
  await waitFor(() => child.exited !== undefined, {
    what: `the writer to kill itself at the acknowledgement instant (${what})`,
    deadlineMs: options.deadlineMs ?? 60_000,
    observed: () => `${countAcks(files.acks)} acknowledged`,
    progress: (options.progress ?? unnoted)(() => countAcks(files.acks)),
  });
  ok(
    classifyExit(child.exited!).kind === "killed",
    `the writer did not die by SIGKILL: ${child.describe()}`,
  );
}

/** SIGKILLs the writer once `minAcknowledged` operations are journaled. */
async function killedAfter(
  options: PowerLossRunOptions & { minAcknowledged: number },
  files: RunFiles,
  child: Child,
  what: string,
): Promise<void> {
  const threshold = options.minAcknowledged;
  await waitFor(() => countAcks(files.acks) >= threshold, {
    what: `${threshold} acknowledged ${what}`,
    deadlineMs: options.deadlineMs ?? 60_000,
    children: [child],
    observed: () => `${countAcks(files.acks)} acknowledged`,
    progress: (options.progress ?? unnoted)(() => countAcks(files.acks)),
  });
  await killWhileAlive(child);
}

/** Judges one state's database; `ackLines` are the acknowledgements made before its instant. */
export type PowerLossJudge<J extends StateJudgement = StateJudgement> = (
  db: string,
  ackLines: readonly string[],
) => Promise<J>;

/** Parses acknowledgement lines (a torn last line was never acknowledged). */
export function parseAcks<T>(lines: readonly string[]): T[] {
  const out: T[] = [];
  for (const line of lines) {
    try {
      out.push(JSON.parse(line) as T);
    } catch {
      break;
    }
  }
  return out;
}

/** The verdict of each state, with the sound ones a second life may continue collected. */
function verdicts<J extends StateJudgement>(
  judging: StateJudging<J>,
  name: string,
  candidates: PowerLossCandidate<J>[],
) {
  const { judge, resume } = judging;
  const count = judging.acknowledged ?? ((lines: readonly string[]) => lines.length);
  return (label: string, acks: readonly string[], stateFiles: () => FileSet) =>
  async (dir: string): Promise<StateVerdict> => {
    try {
      const judged = await judge(join(dir, name), acks);
      const verdict = { label, lost: judged.lost, problems: violationsOf(judged.checks) };
      const resumable = resume && (resume.resumable?.(judged) ?? true);
      if (resumable && verdict.lost === 0 && verdict.problems.length === 0) {
        // A sound recovered state a second life may continue (its files as the crash left them).
        candidates.push({
          label,
          files: new Map([...stateFiles()].map(([n, bytes]) => [n, bytes.slice()])),
          acks,
          judged,
          landed: resume.landed(judged, acks),
        });
      }
      return verdict;
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      return { label, lost: count(acks), problems: [`recovery failed: ${why}`] };
    }
  };
}

/** A run before its states are judged: the log's figures, the leg's audit, what the SIGKILL lost. */
function newRun(
  options: PowerLossRunOptions,
  files: RunFiles,
  log: RecorderLog,
  facts: { seed: number; fullLost: number; fidelity: string | null | undefined; audit: LegAudit },
): PowerLossRun {
  return {
    kill: options.kill,
    profile: options.profile ?? "posix",
    acknowledged: countAcks(files.acks),
    statesChecked: 0,
    statesJudged: 0,
    lost: 0,
    losingStates: 0,
    fullLost: facts.fullLost,
    corruptStates: 0,
    ...(facts.fidelity !== undefined ? { fidelity: facts.fidelity } : {}),
    onDisk: facts.audit.onDisk,
    honoured: {
      ok: facts.audit.honoured,
      ...(facts.audit.reason ? { reason: facts.audit.reason } : {}),
    },
    seed: facts.seed,
    log: {
      records: log.records.length,
      syncs: log.records.filter((r) => r.kind === "sync" || r.kind === "syncAll").length,
      calls: log.records.filter((r) => r.counted).length,
      tornBytes: log.tornBytes,
    },
    torn: { states: 0, tearable: 0 },
    resumes: { candidates: 0, run: 0, failed: 0 },
    diagnoses: [],
    checking: { seconds: 0, statesPerSecond: 0, cpuSeconds: 0, recovered: 0 },
    dir: options.dir,
  };
}

/** Counts one state's verdict into the run; keeps the first few failing states' files. */
function tally(
  run: PowerLossRun,
  state: CrashState,
  verdict: StateVerdict,
  kept: { n: number; count: (lines: readonly string[]) => number },
): void {
  run.statesChecked++;
  if (state.torn) run.torn.states++;
  if (verdict.lost > 0) {
    run.losingStates++;
    run.lost = Math.max(run.lost, verdict.lost);
    run.firstLoss ??= `${state.label}: ${verdict.lost} of ${
      kept.count(state.acks)
    } acknowledged missing`;
  }
  if (verdict.problems.length) {
    run.corruptStates++;
    run.firstProblem ??= `${state.label}: ${verdict.problems[0]}`;
  }
  // Keep the first few failing states as evidence (the files before recovery).
  if ((verdict.lost > 0 || verdict.problems.length) && kept.n < 3) {
    writeImage(state.files, join(run.dir, "states", String(kept.n++)));
  }
}

/** How a run's states are judged: the clause's judge, and its second life when it has one. */
export interface StateJudging<J extends StateJudgement> {
  /** Judges one state's database. */
  judge: PowerLossJudge<J>;
  /** Continues a sample of the sound recovered states in a fresh process. */
  resume?: PowerLossResume<J>;
  /**
   * How many operations journal lines acknowledge (default one a line; a writer that also
   * journals each invocation counts its acknowledgements only).
   */
  acknowledged?: (lines: readonly string[]) => number;
}

/** Reads the run's log; a `HarnessError` (ERROR, not FAIL) when the model cannot follow it. */
function fitLog(options: PowerLossRunOptions, files: RunFiles): RecorderLog {
  return judgeableLog(readLog(files.log), options.dir);
}

/** The leg's audit at the kill, and whether replaying the log gives the files on disk. */
function atTheKill(
  options: PowerLossRunOptions,
  files: RunFiles,
  killed: { files: FileSet },
): { audit: LegAudit; fidelity: string | null | undefined } {
  // The mode the writer ran in, observed before anything reopens the file. Only the
  // acknowledgement-instant kill is between operations: a random kill can land mid-
  // transaction, where a journal not yet synced (magic still zero) is DELETE's too.
  const audit = legVerdict(options.leg, [
    observeJournalMode(files.db, `${options.kill} kill`, options.kill === "ack"),
  ]);
  const fidelity = options.kill === "ack"
    ? firstDifference(killed.files, readFolder(files.dbDir))
    : undefined;
  return { audit, fidelity };
}

/** Counts the checking's time into the run and this process's totals. */
function timeChecking(
  run: PowerLossRun,
  cache: RecoveredStates<StateVerdict>,
  clock: { started: number; cpu: ReturnType<typeof cpuUsage> },
): void {
  run.statesJudged = cache.judged - 1;
  const seconds = (performance.now() - clock.started) / 1000;
  const used = cpuUsage(clock.cpu);
  const cpuSeconds = (used.user + used.system) / 1e6;
  run.checking = {
    seconds,
    statesPerSecond: seconds > 0 ? run.statesChecked / seconds : 0,
    cpuSeconds,
    recovered: cache.recovered - 1,
  };
  totals.states += run.statesChecked;
  totals.recovered += cache.recovered - 1;
  totals.judged += run.statesJudged;
  totals.seconds += seconds;
  totals.cpuSeconds += cpuSeconds;
}

/**
 * Reads the log, derives every crash state a power loss at each sync point (and at the
 * kill) may leave under the profile (the torn last writes enumerated), and has `judge`
 * rule on each in-process: its violations make the state inconsistent, its lost
 * operations count against durability. Then a sample of the sound recovered states is
 * continued by a fresh process (`resume`). A log the model cannot follow (a write
 * outside the folder, past its bound, an unmodelled call) is an error, never a pass.
 *
 * @param options The run.
 * @param files The run's files.
 * @param judging The clause's judge, and its second life.
 * @returns What the run found.
 */
export async function checkStates<J extends StateJudgement>(
  options: PowerLossRunOptions,
  files: RunFiles,
  judging: StateJudging<J>,
): Promise<PowerLossRun> {
  const { resume } = judging;
  const count = judging.acknowledged ?? ((lines: readonly string[]) => lines.length);
  const log = fitLog(options, files);
  const seed = options.seed ?? runSeed();
  // What the SIGKILL itself left: the log's end applied (the page cache survives).
  const killed = killEnd(log, files.baseline);
  const { audit, fidelity } = atTheKill(options, files, killed);
  const cache = new RecoveredStates<StateVerdict>(join(options.dir, "scratch"));
  const candidates: PowerLossCandidate<J>[] = [];
  const verdictOf = verdicts(judging, basename(files.db), candidates);
  const full = await cache.check(
    { files: killed.files, key: "sigkill", label: "SIGKILL (the page cache kept)" },
    String(killed.acks.length),
    verdictOf("SIGKILL", killed.acks, () => killed.files),
  );
  const pattern = powerLossPattern(log, files.db);
  const clock = { started: performance.now(), cpu: cpuUsage() };
  const run = newRun(options, files, log, { seed, fullLost: full.lost, fidelity, audit });
  if (judging.acknowledged) {
    // The journal's complete lines (a torn last one was never acknowledged).
    const lines = Deno.readTextFileSync(files.acks).split("\n").slice(0, -1);
    run.acknowledged = judging.acknowledged(lines);
  }
  const stats: PowerLossStats = { instants: 0, tearable: 0, torn: 0 };
  if (pattern) run.pattern = pattern;
  const states = powerLossStates(log, {
    stats,
    tornLast: options.tornLast ?? true,
    profile: run.profile,
    baseline: files.baseline,
    samples: options.subsets ?? 12,
    seed,
    ...(options.instants !== undefined ? { lastInstants: options.instants } : {}),
  });
  const kept = { n: 0, count };
  for (const state of states) {
    const key = String(state.acks.length);
    const verdict = await cache.check(
      state,
      key,
      verdictOf(state.label, state.acks, () => state.files),
    );
    tally(run, state, verdict, kept);
  }
  run.torn.tearable = stats.tearable;
  timeChecking(run, cache, clock);
  cache.close();
  await Deno.remove(cache.scratch, { recursive: true }).catch(() => {});
  if (run.losingStates) {
    // The pattern the recorder's log shows at an acknowledgement, read from the calls.
    run.diagnoses = pattern ? [diagnosis(pattern)] : [];
  }
  if (resume) {
    run.resumes = await resumeStates(options, candidates, {
      count: options.resumes ?? 3,
      resume,
    });
  }
  return run;
}
