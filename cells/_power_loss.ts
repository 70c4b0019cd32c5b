// The power-loss tier's machinery, shared by its four cells: the recorded run (a child
// with the recording VFS preloaded, SIGKILLed at the acknowledgement instant or at a
// random moment), the replay of its log into crash states, the verdict on each state
// through the clause's judge, and the steps a cell reports. The tier is described in
// power_loss.ts.
import { ok } from "node:assert/strict";
import { join } from "node:path";
import { countAcks } from "../harness/ack_journal.ts";
import { classifyExit, killWhileAlive, reapAll } from "../harness/child.ts";
import { effectiveModeOrSkip, type Leg, legEnv } from "../harness/legs.ts";
import { runSeed } from "../harness/seeded_random.ts";
import { waitFor } from "../harness/wait_for.ts";
import {
  CrashModel,
  type CrashState,
  type FileSet,
  materialise,
  readVfsLog,
  snapshotFolder,
} from "../session_db/crash_states.ts";
import { type CellRun, defineCell } from "./_cell.ts";
import type { CellOptions } from "./cell_options.ts";
import { type StateJudgement, violationsOf } from "./_state_check.ts";
import { spawnRecordedChild } from "./recorded_child.ts";
import { CELL_METHODS, loadTarget } from "./target.ts";
import { targetAccess } from "./target_access.ts";

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
 *   subsets: 4,
 *   torn: 2,
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
  /** Random subset states per run (default 12). */
  subsets?: number;
  /** Torn states per run (default 6). */
  torn?: number;
  /** The first seed of the random states (default: drawn, and reported). */
  seed?: number;
  /** Extra environment for the writer (e.g. `SESSION_DB_SYNCHRONOUS` for the tool). */
  env?: Record<string, string>;
}

/**
 * The verdict on one crash state.
 *
 * @example
 * ```ts
 * import type { StateVerdict } from "./power_loss.ts";
 * function line(verdict: StateVerdict): string {
 *   const problems = verdict.problems.length ? verdict.problems.join("; ") : "recovered";
 *   return `${verdict.kind} state (seed ${verdict.seed}): ${verdict.lost} lost, ${problems}`;
 * }
 * ```
 */
export interface StateVerdict {
  /** The state's kind. */
  kind: CrashState["kind"];
  /** Its seed (0 for the deterministic ones). */
  seed: number;
  /** Acknowledged operations missing from it. */
  lost: number;
  /** Consistency violations (empty when it recovered to a valid database). */
  problems: string[];
}

/**
 * What one recorded run found.
 *
 * @example
 * ```ts
 * import type { PowerLossRun } from "./power_loss.ts";
 * function held(run: PowerLossRun): boolean {
 *   return run.lastSyncLost === 0 && run.corruptStates === 0 && (run.fidelity ?? null) === null;
 * }
 * ```
 */
export interface PowerLossRun {
  /** The kill. */
  kill: PowerLossKill;
  /** Acknowledged operations. */
  acknowledged: number;
  /** Crash states materialised and checked. */
  statesChecked: number;
  /** Acknowledged operations missing from the last-sync image. */
  lastSyncLost: number;
  /** Acknowledged operations missing from the full image (what a SIGKILL leaves). */
  fullLost: number;
  /** States that did not recover to a valid database. */
  corruptStates: number;
  /** The first violation seen, with its state. */
  firstProblem?: string;
  /**
   * Whether replaying the log reproduces the files on disk: `null` when it does, a
   * description when not; checked after an `ack` kill only (a random kill can land
   * between a write and its record).
   */
  fidelity?: string | null;
  /** The on-disk journal mode after the run. */
  onDisk: string;
  /** Whether the leg was honoured, and why not. */
  honoured: { ok: boolean; reason?: string };
  /** The first seed of the random states. */
  seed: number;
  /** Completed syncs and writes in the log. */
  log: { syncs: number; operations: number; records: number; tornBytes: number };
  /** Where the run's files are. */
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

/** A run's files: the database folder (what the crash states replace), journal, log. */
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
    log: join(dir, "vfs.log"),
    baseline: snapshotFolder(dbDir),
  };
}

/**
 * Runs `script` (a child of the cells, given the target first) with the recording VFS
 * until the kill: its own at the acknowledgement instant (a crash point in `env`, or its
 * own count), or the parent's once `minAcknowledged` operations are journaled.
 */
export async function recordAndKill(
  options: PowerLossRunOptions & { minAcknowledged: number },
  files: RunFiles,
  script: string,
  args: string[],
  what: string,
  env: Record<string, string> = {},
): Promise<void> {
  const access = targetAccess(options.target);
  const child = spawnRecordedChild({
    script: new URL(script, import.meta.url),
    args: [options.target, ...args],
    runDir: options.dir,
    library: options.leg.library,
    env: { ...legEnv(options.leg), ...options.env, ...env },
    ...(access.read ? { read: access.read } : {}),
    ...(access.importHosts ? { importHosts: access.importHosts } : {}),
  }, files.log);
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

/**
 * Replays the log, materialises every crash state, and has `judge` rule on each: its
 * violations make the state inconsistent, its lost operations count against durability
 * in the last-sync and full images.
 */
export async function checkStates(
  options: PowerLossRunOptions,
  files: RunFiles,
  acknowledged: number,
  judge: (db: string) => Promise<StateJudgement>,
): Promise<PowerLossRun> {
  const log = readVfsLog(files.log);
  const model = new CrashModel(files.baseline, log.records, files.dbDir);
  const seed = options.seed ?? runSeed();
  const fidelity = options.kill === "ack"
    ? sameFiles(model.fullImage(), snapshotFolder(files.dbDir))
    : undefined;
  const audit = effectiveModeOrSkip(files.db, options.leg);
  const verdicts: StateVerdict[] = [];
  const states = model.states({ subsets: options.subsets ?? 12, torn: options.torn ?? 6, seed });
  for (const [index, state] of states.entries()) {
    const dir = join(options.dir, "states", `${index}-${state.kind}-${state.seed}`);
    materialise(state.files, dir);
    const durable = state.kind === "last-sync" || state.kind === "full";
    let verdict: { lost: number; problems: string[] };
    try {
      const judged = await judge(join(dir, "store.db"));
      verdict = { lost: judged.lost, problems: violationsOf(judged.checks) };
    } catch (error) {
      verdict = {
        lost: acknowledged,
        problems: [`recovery failed: ${error instanceof Error ? error.message : String(error)}`],
      };
    }
    verdicts.push({ kind: state.kind, seed: state.seed, ...verdict });
    // Keep a state's folder as evidence only when it broke a rule.
    if (verdict.problems.length === 0 && (!durable || verdict.lost === 0)) {
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  }
  const bad = verdicts.find((v) => v.problems.length > 0);
  return {
    kill: options.kill,
    acknowledged,
    statesChecked: verdicts.length,
    lastSyncLost: verdicts.find((v) => v.kind === "last-sync")!.lost,
    fullLost: verdicts.find((v) => v.kind === "full")!.lost,
    corruptStates: verdicts.filter((v) => v.problems.length > 0).length,
    ...(bad ? { firstProblem: `${bad.kind} state (seed ${bad.seed}): ${bad.problems[0]}` } : {}),
    ...(fidelity !== undefined ? { fidelity } : {}),
    onDisk: audit.onDisk,
    honoured: { ok: audit.honoured, ...(audit.reason ? { reason: audit.reason } : {}) },
    seed,
    log: {
      syncs: model.syncs,
      operations: model.operations,
      records: log.records.length,
      tornBytes: log.tornBytes,
    },
    dir: options.dir,
  };
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
    acknowledged: run.acknowledged,
    statesChecked: run.statesChecked,
    lastSyncLost: run.lastSyncLost,
    fullLost: run.fullLost,
    corruptStates: run.corruptStates,
    seed: run.seed,
    onDisk: run.onDisk,
    log: run.log,
    ...(run.firstProblem ? { firstProblem: run.firstProblem } : {}),
    ...(run.fidelity ? { fidelity: run.fidelity } : {}),
  });
  await t.step(`${label}: leg honoured: on-disk mode ${run.onDisk}`, () => {
    ok(run.honoured.ok, run.honoured.reason);
  });
  if (run.fidelity !== undefined) {
    await t.step(`${label}: the log replays to the files on disk`, () => {
      ok(run.fidelity === null, `the recording differs from the disk: ${run.fidelity}`);
    });
  }
  await t.step(
    `${label}: nothing acknowledged lost in the last-sync image: ${run.acknowledged} acknowledged ${what}`,
    () => {
      ok(
        run.lastSyncLost === 0,
        `${run.lastSyncLost} of ${run.acknowledged} acknowledged ${what} missing after a power loss (states kept in ${run.dir})`,
      );
      ok(run.fullLost === 0, `${run.fullLost} acknowledged ${what} missing after a SIGKILL`);
    },
  );
  await t.step(
    `${label}: every crash state recovers consistent: ${run.statesChecked} states`,
    () => {
      ok(
        run.corruptStates === 0,
        `${run.corruptStates} of ${run.statesChecked} states inconsistent, first: ${run.firstProblem} (seed ${run.seed}; states kept in ${run.dir})`,
      );
    },
  );
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
  return defineCell({
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
