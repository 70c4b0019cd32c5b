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
import { countAcks } from "../harness/ack_journal.ts";
import { classifyExit, killWhileAlive, reapAll, spawnChild } from "../harness/child.ts";
import { type Leg, legEnv, legVerdict, observeJournalMode } from "../harness/legs.ts";
import { runSeed } from "../harness/seeded_random.ts";
import { waitFor } from "../harness/wait_for.ts";
import { buildRecorder } from "../recorder/build.ts";
import {
  killEnd,
  powerLossStates,
  type PowerLossStats,
  type Profile,
} from "../recorder/crash_states.ts";
import { type FileSet, readFolder, writeImage } from "../recorder/image.ts";
import { logProblems, readLog } from "../recorder/log.ts";
import { denoCacheDir, recorderEnv } from "../recorder/record.ts";
import { RecoveredStates } from "../recorder/recovered.ts";
import { type CellRun, defineCell } from "./_cell.ts";
import type { CellOptions } from "./cell_options.ts";
import { type StateJudgement, violationsOf } from "./_state_check.ts";
import type { Diagnosis } from "./cell_report.ts";
import { diagnosisLines, powerLossDiagnoses } from "./power_loss_diagnosis.ts";
import {
  type PowerLossResume,
  type ResumeCandidate,
  resumeStates,
  type ResumeTally,
} from "./_power_loss_resume.ts";
import { CELL_METHODS, loadTarget } from "./target.ts";
import { declaredPermissions, targetAccess } from "./target_access.ts";

/**
 * How the writer dies: the instant an operation is acknowledged, or at a random moment.
 *
 * @example
 * ```ts
 * import type { PowerLossKill } from "./power_loss.ts";
 * import { powerLossPrefixCell } from "./power_loss_prefix_durability.ts";
 * const kills: PowerLossKill[] = ["ack"]; // only the kill the instant an append is acknowledged
 * const target = new URL("./reference_target.ts", import.meta.url);
 * for (const test of await powerLossPrefixCell({ target, kills })) Deno.test(test);
 * ```
 */
export type PowerLossKill = "ack" | "random";

/**
 * Options of the power-loss cells and runs.
 *
 * @example
 * ```ts
 * import { powerLossCells, type PowerLossOptions } from "./power_loss.ts";
 * const options: PowerLossOptions = {
 *   target: new URL("./reference_target.ts", import.meta.url),
 *   profile: "ext4-ordered",
 *   subsets: 4,
 *   seed: 7, // replay a reported run
 * };
 * for (const test of await powerLossCells(options)) Deno.test(test);
 * ```
 */
export interface PowerLossOptions extends CellOptions {
  /** Acknowledged operations before the kill (default 40 appends, 15 rotations). */
  minAcknowledged?: number;
  /** How long to wait for them (default 60 s). */
  deadlineMs?: number;
  /** Which kills to run (default both). */
  kills?: readonly PowerLossKill[];
  /** The persistence profile: how names persist (default `posix`, the strict one). */
  profile?: Profile;
  /** Random states per crash instant, half of them with torn sectors (default 12). */
  subsets?: number;
  /**
   * Crash instants: the last N sync points, the kill's instant counting as one (default
   * every sync point of the run).
   */
  instants?: number;
  /** The first seed of the random states (default: drawn, and reported). */
  seed?: number;
  /** Extra environment for the writer (e.g. `SESSION_DB_SYNCHRONOUS` for the tool). */
  env?: Record<string, string>;
  /** Recovered states continued by a fresh process per run (default 3; 0: none). */
  resumes?: number;
  /** Whether the torn last writes are enumerated (default true; off only to show what they catch). */
  tornLast?: boolean;
}

/**
 * The verdict on one crash state.
 *
 * @example
 * ```ts
 * import type { StateVerdict } from "./power_loss.ts";
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
 * import type { PowerLossRun } from "./power_loss.ts";
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
}

/**
 * What a run needs: the leg, the target, a fresh folder.
 *
 * @example
 * ```ts
 * import { currentLeg } from "../harness/legs.ts";
 * import type { PowerLossRunOptions } from "./power_loss.ts";
 * import { powerLossPrefixRun } from "./power_loss_prefix_durability.ts";
 * const options: PowerLossRunOptions = {
 *   leg: currentLeg(),
 *   target: new URL("./reference_target.ts", import.meta.url).href,
 *   dir: Deno.makeTempDirSync(),
 *   kill: "random",
 * };
 * console.log((await powerLossPrefixRun(options)).statesChecked);
 * ```
 */
export interface PowerLossRunOptions extends Omit<PowerLossOptions, "target" | "leg" | "kills"> {
  /** The leg (library, journal mode). */
  leg: Leg;
  /** The target specifier. */
  target: string;
  /** A fresh folder for the run (created). */
  dir: string;
  /** The kill. */
  kill: PowerLossKill;
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
 * import { type PowerLossTotals, powerLossTotals } from "./_power_loss.ts";
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
 * import { powerLossTotals } from "./_power_loss.ts";
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

/**
 * Runs `script` (a child of the cells, given the target first) under the recorder until
 * the kill: its own at the acknowledgement instant (a crash point in `env`, or its own
 * count), or the parent's once `minAcknowledged` operations are journaled. The
 * acknowledgement journal is the recorder's mark file, so each acknowledgement sits in
 * the log between the calls around it.
 */
export async function recordAndKill(
  options: PowerLossRunOptions & { minAcknowledged: number },
  files: RunFiles,
  script: string,
  args: string[],
  what: string,
  env: Record<string, string> = {},
): Promise<void> {
  const library = (await powerLossRecorder()).path;
  if (!library) throw new Error(`The power-loss tier needs the recorder: ${(await built)?.reason}`);
  const access = targetAccess(options.target);
  const permissions = await declaredPermissions(options.target);
  const child = spawnChild({
    script: new URL(`./children/${script}`, import.meta.url),
    args: [options.target, ...args],
    runDir: options.dir,
    library: options.leg.library,
    env: {
      ...legEnv(options.leg),
      ...options.env,
      ...env,
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
    ...(access.read ? { read: access.read } : {}),
    ...(access.config ? { config: access.config } : {}),
    ...(access.importHosts ? { importHosts: access.importHosts } : {}),
    ...(permissions ? { permissions } : {}),
  });
  const threshold = options.minAcknowledged;
  try {
    if (options.kill === "ack") {
      await waitFor(() => child.exited !== undefined, {
        what: `the writer to kill itself at the acknowledgement instant (${what})`,
        deadlineMs: options.deadlineMs ?? 60_000,
        observed: () => `${countAcks(files.acks)} acknowledged`,
      });
      ok(
        classifyExit(child.exited!).kind === "killed",
        `the writer did not die by SIGKILL: ${child.describe()}`,
      );
    } else {
      await waitFor(() => countAcks(files.acks) >= threshold, {
        what: `${threshold} acknowledged ${what}`,
        deadlineMs: options.deadlineMs ?? 60_000,
        children: [child],
        observed: () => `${countAcks(files.acks)} acknowledged`,
      });
      await killWhileAlive(child);
    }
  } finally {
    await reapAll([child]);
  }
}

function sameFiles(expected: FileSet, actual: FileSet): string | null {
  const names = [...new Set([...expected.keys(), ...actual.keys()])].sort();
  for (const name of names) {
    const a = expected.get(name);
    const b = actual.get(name);
    if (!a || !b) {
      return `${name}: ${a ? "in the replay only" : "on disk only"}`;
    }
    if (a.length !== b.length) return `${name}: replay ${a.length} bytes, disk ${b.length} bytes`;
    const at = a.findIndex((byte, i) => byte !== b[i]);
    if (at !== -1) return `${name}: first difference at byte ${at}`;
  }
  return null;
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

/**
 * Reads the log, derives every crash state a power loss at each sync point (and at the
 * kill) may leave under the profile, and has `judge` rule on each in-process: its
 * violations make the state inconsistent, its lost operations count against durability.
 * A log the model cannot follow (a write outside the folder, past its bound, an
 * unmodelled call) is an error, never a pass.
 */
export async function checkStates<J extends StateJudgement>(
  options: PowerLossRunOptions,
  files: RunFiles,
  judge: PowerLossJudge<J>,
  resume?: PowerLossResume<J>,
): Promise<PowerLossRun> {
  const log = readLog(files.log);
  const unfit = logProblems(log);
  if (unfit.length) {
    throw new Error(
      `The recorded run cannot be judged: ${unfit.join("; ")} (run kept in ${options.dir})`,
    );
  }
  const profile = options.profile ?? "posix";
  const seed = options.seed ?? runSeed();
  const name = basename(files.db);
  // The mode the writer ran in, observed before anything reopens the file. Only the
  // acknowledgement-instant kill is between operations: a random kill can land mid-
  // transaction, where a journal not yet synced (magic still zero) is DELETE's too.
  const audit = legVerdict(options.leg, [
    observeJournalMode(files.db, `${options.kill} kill`, options.kill === "ack"),
  ]);
  const onDisk = audit.onDisk;
  // What the SIGKILL itself left: the log's end applied (the page cache survives).
  const killed = killEnd(log, files.baseline);
  const fidelity = options.kill === "ack"
    ? sameFiles(killed.files, readFolder(files.dbDir))
    : undefined;
  const cache = new RecoveredStates<StateVerdict>(join(options.dir, "scratch"));
  const candidates: ResumeCandidate<J>[] = [];
  const verdictOf =
    (label: string, acks: readonly string[], stateFiles?: () => FileSet) => async (dir: string) => {
      try {
        const judged = await judge(join(dir, name), acks);
        const verdict = { label, lost: judged.lost, problems: violationsOf(judged.checks) };
        if (resume && stateFiles && verdict.lost === 0 && verdict.problems.length === 0) {
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
        return { label, lost: acks.length, problems: [`recovery failed: ${why}`] };
      }
    };
  const full = await cache.check(
    { files: killed.files, key: "sigkill" },
    String(killed.acks.length),
    verdictOf("SIGKILL", killed.acks, () => killed.files),
  );
  const started = performance.now();
  const cpu = cpuUsage();
  const run: PowerLossRun = {
    kill: options.kill,
    profile,
    acknowledged: countAcks(files.acks),
    statesChecked: 0,
    statesJudged: 0,
    lost: 0,
    losingStates: 0,
    fullLost: full.lost,
    corruptStates: 0,
    ...(fidelity !== undefined ? { fidelity } : {}),
    onDisk,
    honoured: { ok: audit.honoured, ...(audit.reason ? { reason: audit.reason } : {}) },
    seed,
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
  let kept = 0;
  const stats: PowerLossStats = { instants: 0, tearable: 0, torn: 0 };
  const states = powerLossStates(log, {
    stats,
    tornLast: options.tornLast ?? true,
    profile,
    baseline: files.baseline,
    samples: options.subsets ?? 12,
    seed,
    ...(options.instants !== undefined ? { lastInstants: options.instants } : {}),
  });
  for (const state of states) {
    const label = state.label;
    const verdict = await cache.check(
      state,
      String(state.acks.length),
      verdictOf(label, state.acks, () => state.files),
    );
    run.statesChecked++;
    if (state.torn) run.torn.states++;
    if (verdict.lost > 0) {
      run.losingStates++;
      run.lost = Math.max(run.lost, verdict.lost);
      run.firstLoss ??= `${label}: ${verdict.lost} of ${state.acks.length} acknowledged missing`;
    }
    if (verdict.problems.length) {
      run.corruptStates++;
      run.firstProblem ??= `${label}: ${verdict.problems[0]}`;
    }
    // Keep the first few failing states as evidence (the files before recovery).
    if ((verdict.lost > 0 || verdict.problems.length) && kept < 3) {
      writeImage(state.files, join(options.dir, "states", String(kept++)));
    }
  }
  run.statesJudged = cache.judged - 1;
  run.torn.tearable = stats.tearable;
  const seconds = (performance.now() - started) / 1000;
  const used = cpuUsage(cpu);
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
  await Deno.remove(cache.scratch, { recursive: true }).catch(() => {});
  if (run.losingStates) {
    run.diagnoses = powerLossDiagnoses({ journalMode: onDisk, mostLost: run.lost });
  }
  if (resume) {
    run.resumes = await resumeStates(options.dir, candidates, options.resumes ?? 3, resume);
  }
  return run;
}

/** Notes a run's figures and asserts it in steps: leg, fidelity, durability, consistency. */
export async function powerLossSteps(
  ctx: CellRun,
  t: Deno.TestContext,
  what: string,
  run: PowerLossRun,
  label = `${run.kill} kill`,
): Promise<void> {
  ctx.note(label, {
    profile: run.profile,
    acknowledged: run.acknowledged,
    statesChecked: run.statesChecked,
    statesJudged: run.statesJudged,
    lost: run.lost,
    losingStates: run.losingStates,
    fullLost: run.fullLost,
    corruptStates: run.corruptStates,
    seed: run.seed,
    onDisk: run.onDisk,
    log: run.log,
    checking: run.checking,
    torn: run.torn,
    resumes: run.resumes,
    ...(run.diagnoses.length ? { diagnoses: run.diagnoses } : {}),
    ...(run.firstLoss ? { firstLoss: run.firstLoss } : {}),
    ...(run.firstProblem ? { firstProblem: run.firstProblem } : {}),
    ...(run.fidelity ? { fidelity: run.fidelity } : {}),
  });
  // Nothing judged is never a pass, and an instant with an unsynced write always tears it.
  await t.step(
    `${label}: states judged: ${run.statesChecked}, ${run.torn.states} of them torn last writes`,
    () => {
      ok(run.statesChecked > 0, "no crash state was judged");
      ok(
        run.torn.states > 0 || run.torn.tearable === 0,
        `${run.torn.tearable} instants had an unsynced write, but no torn state was judged`,
      );
    },
  );
  await t.step(`${label}: leg honoured: on-disk mode ${run.onDisk}`, () => {
    ok(run.honoured.ok, run.honoured.reason);
  });
  if (run.fidelity !== undefined) {
    await t.step(`${label}: the log replays to the files on disk`, () => {
      ok(run.fidelity === null, `the recording differs from the disk: ${run.fidelity}`);
    });
  }
  await t.step(
    `${label}: nothing acknowledged lost in any power-loss state (${run.profile}): ${run.acknowledged} acknowledged ${what}`,
    () => {
      ok(
        run.losingStates === 0,
        [
          `${run.losingStates} of ${run.statesChecked} power-loss states (${run.profile}) lose acknowledged ${what}, up to ${run.lost}`,
          `first: ${run.firstLoss}`,
          ...diagnosisLines(run.diagnoses),
          `seed ${run.seed}; states kept in ${run.dir}/states`,
        ].join("\n"),
      );
      ok(run.fullLost === 0, `${run.fullLost} acknowledged ${what} missing after a SIGKILL`);
    },
  );
  await t.step(
    `${label}: every crash state recovers consistent: ${run.statesChecked} states (${run.profile})`,
    () => {
      ok(
        run.corruptStates === 0,
        `${run.corruptStates} of ${run.statesChecked} states inconsistent, first: ${run.firstProblem} (seed ${run.seed}; states kept in ${run.dir}/states)`,
      );
    },
  );
  if (run.resumes.candidates > 0) {
    await t.step(
      `${label}: a fresh process continues ${run.resumes.run} of ${run.resumes.candidates} recovered states and both lives' ${what} hold`,
      () => {
        ok(run.resumes.run > 0, "no recovered state was continued");
        ok(
          run.resumes.failed === 0,
          `${run.resumes.failed} of ${run.resumes.run} continued states failed, first: ${run.resumes.first}`,
        );
      },
    );
  }
}

/**
 * The test definitions of a power-loss cell: a SKIP with the reason when the recorder
 * cannot run here (never counted as a pass), else the cell.
 */
export async function powerLossCell(
  spec: Parameters<typeof defineCell>[0],
  options: PowerLossOptions,
): Promise<Deno.TestDefinition[]> {
  const { reason } = await powerLossRecorder();
  if (reason) {
    return [{
      name: `cell ${spec.id} ${spec.title} SKIP: ${reason}`,
      ignore: true,
      fn: () => {},
    }];
  }
  return defineCell({ ...spec, preloads: true }, options);
}

/** What sets one of cells 1, 3 and 4 apart in the tier. */
export interface KillCellSpec {
  id: 1 | 3 | 4;
  title: string;
  /** What its operations are called in the steps, e.g. `appends`. */
  what: string;
  /** Its kills, in order, when the options name none. */
  kills: readonly PowerLossKill[];
  /** The crash points the `ack` kill needs the target to list (skipped otherwise). */
  ackPoints: readonly string[];
  /** One recorded run. */
  run: (options: PowerLossRunOptions) => Promise<PowerLossRun>;
}

/** A cell that runs one recorded run per kill on the current leg and asserts each. */
export function powerLossKillCell(
  spec: KillCellSpec,
  options: PowerLossOptions,
): Promise<Deno.TestDefinition[]> {
  return powerLossCell({
    id: spec.id,
    title: spec.title,
    legs: "all",
    requires: CELL_METHODS[spec.id],
    async run(ctx, t) {
      const points = spec.ackPoints.length
        ? (await loadTarget(ctx.target)).crashPoints?.() ?? []
        : [];
      for (const kill of options.kills ?? spec.kills) {
        if (kill === "ack" && !spec.ackPoints.every((p) => points.includes(p))) continue;
        const run = await spec.run({
          ...options,
          leg: ctx.leg,
          target: ctx.target,
          dir: ctx.run.file(kill),
          kill,
        });
        await powerLossSteps(ctx, t, spec.what, run);
      }
    },
  }, options);
}
