// One cell's run, once its gate let it through: the run folder, the context its probe gets
// (children spawned with the leg's environment and the target's access, figures, seeded
// choices, the journal mode observed at every kill), the overall deadline, and the
// outcome: PASS, FAIL (with the known patterns' cause and fix), ERROR (only the suite
// failed), or SKIP (the checks held about a mode the leg does not advertise).
import {
  type Child,
  reapAll,
  reapWithoutSurvivors,
  spawnChild,
  type SpawnOptions,
} from "../../harness/child.ts";
import { Activity } from "../../harness/activity.ts";
import { RunDir } from "../../harness/evidence.ts";
import { HarnessError, isHarnessError } from "../../harness/harness_error.ts";
import {
  type JournalObservation,
  type Leg,
  legEnv,
  legVerdict,
  observeJournalMode,
} from "../../harness/legs.ts";
import type { ChildPermissions } from "../../harness/permissions.ts";
import { runSeed, seededRandom } from "../../harness/seeded_random.ts";
import type { CellRun, DefinedCell } from "./_types.ts";
import {
  CellFailure,
  type CellReporter,
  engineEvidence,
  type FailedCheck,
  failureText,
} from "./outcome.ts";
import type { CellOptions } from "./options.ts";
import type { StoreEngine } from "./report.ts";
import { diagnosesOf, diagnosisLines } from "./diagnoses.ts";
import { targetAccess } from "../contract/target_access.ts";
import {
  findSandboxRefusals,
  refusalReason,
  SANDBOX_REFUSALS_ENV,
  sandboxRefusalsFile,
} from "../contract/sandbox_refusal.ts";
import { restoreStartCwd } from "../../internal/start_cwd.ts";
import { judgingIn, watchJudgingHere } from "../../internal/judging_beacon.ts";
import { envMilliseconds } from "../../internal/env_ms.ts";

/** The default overall deadline of one cell: far above a run on a loaded 2-core machine. */
export const CELL_DEADLINE_MS = 10 * 60_000;

/** The variable that sets every cell's overall deadline where no option does. */
export const CELL_DEADLINE_ENV = "CELLS_CELL_DEADLINE_MS";

/** A cell's overall deadline: the option, else `CELLS_CELL_DEADLINE_MS`, else 10 minutes. */
function cellDeadline(options: CellOptions): number {
  return options.overallDeadlineMs ?? envMilliseconds(CELL_DEADLINE_ENV, CELL_DEADLINE_MS);
}

/** What a run is given by its definition. */
export interface RunSetup {
  /** The cell's options (seed, deadline, evidence). */
  options: CellOptions;
  /** The leg (its version is the store's own SQLite's when it brings one). */
  leg: Leg;
  target: string;
  engine: StoreEngine;
  permissions: ChildPermissions | undefined;
  /** The flags the target's children get beyond the narrow scope. */
  widened: string[];
  reporter: CellReporter;
}

/**
 * `t` whose steps record the failure of their check before rethrowing it, and whose
 * every step's end is a move of the run.
 */
function recordingContext(
  t: Deno.TestContext,
  failures: FailedCheck[],
  activity: Activity,
): Deno.TestContext {
  return new Proxy(t, {
    get(target, key) {
      if (key !== "step") {
        const value = Reflect.get(target, key, target);
        return typeof value === "function" ? value.bind(target) : value;
      }
      return (name: string, fn: (inner: Deno.TestContext) => unknown) =>
        target.step(name, async (inner) => {
          try {
            await fn(inner);
          } catch (error) {
            failures.push({
              line: `${name}: ${error instanceof Error ? error.message : String(error)}`,
              error,
              harness: isHarnessError(error),
            });
            throw error;
          } finally {
            activity.mark();
          }
        });
    },
  });
}

/** What every child of a cell or a power-loss run is spawned with. */
export interface TargetChildOptions {
  /** The leg: its library and journal mode. */
  leg: Leg;
  /** The target specifier, each child's first argument. */
  target: string;
  /** The only folder the children may write, and their working folder. */
  runDir: string;
  /** The extra permissions the target declares for its children (`declaredPermissions`). */
  permissions: ChildPermissions | undefined;
  /** Environment every child gets after the leg's (a spawn's own comes last). */
  env?: Record<string, string>;
}

/** Spawns one cells' child script with its arguments (after the target), and extra options. */
export type TargetSpawn = (script: URL, args: string[], extra?: Partial<SpawnOptions>) => Child;

/**
 * The one way the cells spawn their child scripts: with the leg's environment, the
 * target's access (its folder and `deno.json`, or its host), the child runtime's, and the
 * permissions the target declares.
 *
 * @param options The leg, the target, the run folder, the declared permissions.
 * @returns A spawner of child scripts.
 * @example
 * ```ts ignore
 * import { currentLeg } from "../../harness/legs.ts";
 * import { spawnFor } from "./run.ts";
 * const target = new URL("../reference_target.ts", import.meta.url).href;
 * const spawn = spawnFor({ leg: currentLeg(), target, runDir: Deno.makeTempDirSync(), permissions: undefined });
 * const child = spawn(new URL("../prefix_durability/children/prefix_writer.ts", import.meta.url), ["store.db", "acks.jsonl"]);
 * await child.status;
 * ```
 */
export function spawnFor(options: TargetChildOptions): TargetSpawn {
  const { leg, target, runDir, permissions } = options;
  const access = targetAccess(target);
  const scriptAccess = targetAccess(new URL("../contract/child_runtime.ts", import.meta.url).href);
  return (script, args, extra = {}) =>
    spawnChild({
      script: script.href,
      args: [target, ...args],
      runDir,
      library: leg.library,
      ...extra,
      env: {
        ...legEnv(leg),
        [SANDBOX_REFUSALS_ENV]: sandboxRefusalsFile(runDir),
        ...options.env,
        ...extra.env,
      },
      read: [...(access.read ?? []), ...(scriptAccess.read ?? []), ...(extra.read ?? [])],
      importHosts: [...(access.importHosts ?? []), ...(scriptAccess.importHosts ?? [])],
      ...(access.config ? { config: access.config } : {}),
      ...(permissions ? { permissions } : {}),
    });
}

/** A run's context and what the runner needs to see of it afterwards. */
interface Context {
  ctx: CellRun;
  children: Child[];
  observations: JournalObservation[];
  /** When the run last moved: its overall deadline tells a stall from a slow store. */
  activity: Activity;
  /** Called at the overall deadline: no more children. */
  overdue(why: string): void;
}

function makeContext(setup: RunSetup, run: RunDir, seed: number): Context {
  const figures: Record<string, unknown> = {
    seed,
    ...(setup.widened.length ? { childPermissions: setup.widened } : {}),
  };
  // Every child of the run, so that none outlives the cell, even past its deadline.
  const children: Child[] = [];
  const spawn = spawnFor({
    leg: setup.leg,
    target: setup.target,
    runDir: run.path,
    permissions: setup.permissions,
  });
  let overdue: string | undefined;
  const observations: JournalObservation[] = [];
  const activity = new Activity();
  const ctx: CellRun = {
    leg: setup.leg,
    target: setup.target,
    engine: setup.engine,
    run,
    figures,
    spawn(script, args, extra) {
      if (overdue) throw new Error(`Cannot spawn ${script}: ${overdue}`);
      const child = spawn(script, args, extra);
      children.push(child);
      activity.mark();
      child.status.finally(() => activity.mark()).catch(() => {});
      return child;
    },
    progress: (measure) => activity.watch(measure),
    note(name, value) {
      figures[name] = value;
    },
    attach(name, text) {
      Deno.writeTextFileSync(run.file(name), text);
      setup.reporter.attach(name, text);
      const attached = figures.attachments;
      figures.attachments = [...(Array.isArray(attached) ? attached : []), name];
    },
    seed,
    random: seededRandom(seed),
    observeLeg(db, at, quiescent = false) {
      const observation = observeJournalMode(db, at, quiescent);
      observations.push(observation);
      return observation;
    },
  };
  return { ctx, children, observations, activity, overdue: (why) => overdue = why };
}

/** The ERROR of a run whose children met sandbox refusals, or `undefined`. */
function refusedError(run: RunDir): HarnessError | undefined {
  const refusals = findSandboxRefusals(run.path);
  return refusals.length ? new HarnessError(refusalReason(refusals)) : undefined;
}

/** Every kill's observation, as counts per mode, for the report. */
function observedModes(observations: readonly JournalObservation[]): Record<string, number> {
  const modes: Record<string, number> = {};
  for (const o of observations) modes[o.mode] = (modes[o.mode] ?? 0) + 1;
  return modes;
}

/**
 * A promise that rejects at the overall deadline, naming the children still running: a
 * FAIL when the run had stopped moving (a hang), an ERROR when it moved within the last
 * quarter of the deadline (at most a minute): a store that slow is not judged in time.
 */
function overallDeadline(
  spec: DefinedCell,
  deadlineMs: number,
  context: Context,
): { deadline: Promise<never>; clear(): void } {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      context.overdue(`cell ${spec.id} passed its overall deadline of ${deadlineMs} ms`);
      const running = context.children.filter((child) => !child.exited);
      const quiet = Math.round(context.activity.quietMs());
      const moving = quiet < Math.min(60_000, deadlineMs / 4);
      const Raised = moving ? HarnessError : Error;
      reject(
        new Raised(
          `Cell ${spec.id} ${spec.title} did not finish within its overall deadline of ${deadlineMs} ms ${
            moving
              ? `though it kept moving (last ${quiet} ms before): a store this slow is not judged in that time; raise overallDeadlineMs or ${CELL_DEADLINE_ENV} (--cell-deadline)`
              : `(nothing moved in the last ${quiet} ms; raise overallDeadlineMs or ${CELL_DEADLINE_ENV} on a slow machine)`
          }; ${running.length} child(ren) still running${
            running.map((child) => `\n${child.describe()}`).join("")
          }`,
        ),
      );
    }, deadlineMs);
  });
  return { deadline, clear: () => clearTimeout(timer) };
}

/**
 * The probe, its failed checks turned into one error (a HarnessError when only the suite
 * failed), raced against the overall deadline.
 */
async function probeWithin(
  spec: DefinedCell,
  context: Context,
  t: Deno.TestContext,
  failedChecks: FailedCheck[],
  deadline: Promise<never>,
): Promise<void> {
  const checked = recordingContext(t, failedChecks, context.activity);
  const probing = spec.run(context.ctx, checked).then(() => {
    if (!failedChecks.length) return;
    // Only the suite failed: an ERROR, never a verdict on the store.
    if (failedChecks.every((f) => f.harness)) throw new HarnessError(failureText(failedChecks, []));
    const diagnoses = diagnosesOf(failedChecks.map((f) => f.error));
    throw new CellFailure(failureText(failedChecks, diagnoses), {
      checks: failedChecks.map((f) => f.line),
      diagnoses,
    });
  });
  // Past the deadline the probe is abandoned: its later failure is not news.
  probing.catch(() => {});
  await Promise.race([probing, deadline]);
}

/**
 * Reports a FAIL or an ERROR, keeps the evidence, and rethrows: an ERROR as it came, a
 * FAIL as a {@linkcode CellFailure} with its checks, diagnoses and evidence folder.
 */
async function failed(
  error: unknown,
  setup: RunSetup,
  run: RunDir,
  evidence: { fields: Record<string, unknown>; figures: Record<string, unknown> },
  failedChecks: readonly FailedCheck[],
): Promise<never> {
  const message = error instanceof Error ? error.message : String(error);
  const status = isHarnessError(error) ? "ERROR" : "FAIL";
  const checks = failedChecks.length
    ? failedChecks.map((f) => f.line)
    : [message.split("\n")[0] ?? message];
  const diagnoses = status === "FAIL"
    ? diagnosesOf(failedChecks.length ? failedChecks.map((f) => f.error) : [error])
    : [];
  // A FAIL's text ends with the diagnoses (a CellFailure's has them already).
  const text = error instanceof CellFailure
    ? message
    : [message, ...diagnosisLines(diagnoses)].join("\n");
  const fields = { reason: text, figures: evidence.figures, checks, diagnoses };
  const thrown = status === "ERROR" || error instanceof CellFailure
    ? error
    : new CellFailure(text, { checks, diagnoses }, { cause: error });
  if (setup.options.keepEvidence === false) {
    await Deno.remove(run.path, { recursive: true }).catch(() => {});
    setup.reporter.write(status, fields);
    throw thrown;
  }
  const kept = await run.finish(false, {
    ...evidence.fields,
    ...(diagnoses.length ? { diagnoses } : {}),
    error: error instanceof Error ? error.stack ?? error.message : String(error),
  });
  setup.reporter.write(status, { ...fields, evidence: kept });
  if (thrown instanceof CellFailure && kept) thrown.evidence = kept;
  throw thrown;
}

/**
 * Runs a cell's probe under the overall deadline and reports its outcome: PASS with the
 * evidence figures, FAIL (failed checks, diagnoses, evidence kept), ERROR, or SKIP when
 * the checks held about a mode the leg does not advertise.
 *
 * @param spec The cell.
 * @param setup What its definition gives the run: options, leg, target, engine, reporter.
 * @param t The test context its checks are steps of.
 * @example
 * ```ts ignore
 * import { runCell } from "./run.ts";
 * Deno.test("cell 1", (t) => runCell(spec, { options, leg, target, engine, permissions, widened, reporter }, t));
 * ```
 */
export async function runCell(
  spec: DefinedCell,
  setup: RunSetup,
  t: Deno.TestContext,
): Promise<void> {
  try {
    await runCellHere(spec, setup, t);
  } finally {
    // The store ran in this process too: a chdir of its must not outlive the cell.
    restoreStartCwd();
  }
}

async function runCellHere(
  spec: DefinedCell,
  setup: RunSetup,
  t: Deno.TestContext,
): Promise<void> {
  const run = await RunDir.create(`cell${spec.id}`);
  // The store judged in this process on the run's files is the cell's (its parent names it;
  // with no parent watching, a thread of this process bounds what blocks it).
  await watchJudgingHere();
  const unplace = judgingIn(run.path, {
    cell: spec.id,
    clause: `${spec.id} ${spec.title}`,
    leg: setup.leg.name,
  });
  try {
    await runIn(spec, setup, t, run);
  } finally {
    unplace();
  }
}

async function runIn(
  spec: DefinedCell,
  setup: RunSetup,
  t: Deno.TestContext,
  run: RunDir,
): Promise<void> {
  const { options } = setup;
  const seed = runSeed(options.seed);
  const context = makeContext(setup, run, seed);
  const { ctx, observations } = context;
  const evidence = () => ({
    cell: spec.id,
    title: spec.title,
    target: setup.target,
    leg: setup.leg.name,
    ...engineEvidence(setup.leg, setup.engine),
    ...ctx.figures,
  });
  const { deadline, clear } = overallDeadline(spec, cellDeadline(options), context);
  // Under `deno test` a failed step returns false instead of throwing: record each
  // failure so the cell itself fails, reports FAIL (ERROR when only the suite failed)
  // and keeps its evidence.
  const failedChecks: FailedCheck[] = [];
  let caught: { error: unknown } | undefined;
  try {
    await probeWithin(spec, context, t, failedChecks, deadline);
    // Nothing the cell's children started may outlive it: a survivor is a FAIL.
    await reapWithoutSurvivors(context.children, `cell ${spec.id} ${spec.title}`);
  } catch (error) {
    caught = { error };
  }
  if (observations.length) ctx.figures.legObservations = observedModes(observations);
  clear();
  await reapAll(context.children);
  // A child the sandbox refused judged nothing, whatever the checks said: the refusal is
  // the ERROR, and leads the checks it made fail.
  const refused = refusedError(run);
  if (refused) failedChecks.unshift({ line: refused.message, error: refused, harness: true });
  if (caught || refused) {
    console.error(
      `cell ${spec.id} failed with seed ${seed}: CELLS_SEED=${seed} replays its random choices`,
    );
    return await failed(
      refused ?? caught!.error,
      setup,
      run,
      { fields: evidence(), figures: ctx.figures },
      failedChecks,
    );
  }
  const verdict = observations.length ? legVerdict(setup.leg, observations) : undefined;
  if (verdict && !verdict.honoured) {
    // The checks held, but about a mode the leg does not advertise: not evidence.
    const reason = verdict.reason!;
    const kept = await run.finish(false, { ...evidence(), skipped: reason });
    setup.reporter.write("SKIP", { reason, figures: ctx.figures, evidence: kept });
    throw new Error(`SKIP, not evidence: ${reason}; the run is kept in ${kept}`);
  }
  const kept = await run.finish(true, evidence());
  console.log(`  ${spec.title} evidence: ${JSON.stringify(ctx.figures)}`);
  setup.reporter.write("PASS", { figures: ctx.figures, evidence: kept });
}
