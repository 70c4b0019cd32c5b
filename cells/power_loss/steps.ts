// The power-loss cells' steps and definitions, shared by the four cells: a run's figures
// noted and asserted step by step (states and torn states judged, the leg, the log's
// fidelity, durability with the known pattern's cause and fix, consistency, the second
// lives), a SKIP with the reason where the recorder cannot run, and the cell of cells 1, 3
// and 4 that runs one recorded run per kill.
import { ok } from "node:assert/strict";
import { HarnessError } from "../../harness/harness_error.ts";
import { type CellRun, type CellSpec, defineCell } from "../engine/cell.ts";
import { diagnosed, diagnosisLines } from "../engine/diagnoses.ts";
import { CELL_TITLES, loadTarget } from "../contract/target.ts";
import {
  type PowerLossKill,
  type PowerLossOptions,
  powerLossRecorder,
  type PowerLossRun,
  type PowerLossRunOptions,
} from "./record.ts";

/** A recorded run to report: what its operations are called, and its label. */
export interface PowerLossReport {
  /** What the writer's operations are called, e.g. `appends`. */
  what: string;
  /** The run. */
  run: PowerLossRun;
  /** Its note's key and steps' prefix (default `<kill> kill`). */
  label?: string;
}

/** Notes a run's figures under `label`. */
function noteRun(ctx: CellRun, label: string, run: PowerLossRun): void {
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
}

/** The steps that say the run judged something about the leg: states, torn states, fidelity. */
async function judgedSteps(t: Deno.TestContext, label: string, run: PowerLossRun): Promise<void> {
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
      // The recorder missed a call (another writer, a call it does not hook): the run
      // cannot be judged, which says nothing of the store.
      if (run.fidelity !== null) {
        throw new HarnessError(`the recording differs from the disk: ${run.fidelity}`);
      }
    });
  }
}

/** The clause's steps: nothing acknowledged lost, every state consistent, the second lives. */
async function clauseSteps(
  t: Deno.TestContext,
  label: string,
  { what, run }: PowerLossReport,
): Promise<void> {
  await t.step(
    `${label}: nothing acknowledged lost in any power-loss state (${run.profile}): ${run.acknowledged} acknowledged ${what}`,
    () => {
      // The log's pattern rides on the thrown error, so the cell's report carries it.
      diagnosed(run.pattern, () =>
        ok(
          run.losingStates === 0,
          [
            `${run.losingStates} of ${run.statesChecked} power-loss states (${run.profile}) lose acknowledged ${what}, up to ${run.lost}`,
            `first: ${run.firstLoss}`,
            ...diagnosisLines(run.diagnoses),
            `seed ${run.seed}; states kept in ${run.dir}/states`,
          ].join("\n"),
        ));
      // A process crash keeps every committed transaction: a loss there is not power's.
      diagnosed(
        "ack-before-commit",
        () =>
          ok(run.fullLost === 0, `${run.fullLost} acknowledged ${what} missing after a SIGKILL`),
      );
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
 * Notes a run's figures and asserts it in steps: states judged, leg, fidelity, durability,
 * consistency, the second lives.
 *
 * @param ctx The cell's run (the note).
 * @param t The test context the steps are taken in.
 * @param report The run, what its operations are called, its label.
 * @example
 * ```ts ignore
 * import { powerLossSteps } from "./steps.ts";
 * await powerLossSteps(ctx, t, { what: "appends", run });
 * ```
 */
export async function powerLossSteps(
  ctx: CellRun,
  t: Deno.TestContext,
  report: PowerLossReport,
): Promise<void> {
  const label = report.label ?? `${report.run.kill} kill`;
  noteRun(ctx, label, report.run);
  await judgedSteps(t, label, report.run);
  await clauseSteps(t, label, report);
}

/**
 * The test definitions of a power-loss cell: a SKIP with the reason when the recorder
 * cannot run here (never counted as a pass), else the cell. Its title defaults to
 * `power-loss <the cell's title>`; legs and methods default as in {@linkcode defineCell}.
 *
 * @param spec The cell.
 * @param options Target, leg, states.
 * @returns The test definitions.
 * @example
 * ```ts ignore
 * import { powerLossCell } from "./steps.ts";
 * const target = new URL("../reference_target.ts", import.meta.url);
 * const tests = await powerLossCell({ id: 1, run: async (ctx) => ctx.note("ran", true) }, { target });
 * for (const test of tests) Deno.test(test);
 * ```
 */
export async function powerLossCell(
  spec: CellSpec,
  options: PowerLossOptions,
): Promise<Deno.TestDefinition[]> {
  const title = spec.title ?? `power-loss ${CELL_TITLES[spec.id]}`;
  const { reason } = await powerLossRecorder();
  if (reason) {
    return [{
      name: `cell ${spec.id} ${title} SKIP: ${reason}`,
      ignore: true,
      fn: () => {},
    }];
  }
  return defineCell({ ...spec, title, preloads: true }, options);
}

/** What sets one of cells 1, 3, 4, 8, 9, 10, 11 and 12 apart in the tier. */
export interface KillCellSpec {
  id: 1 | 3 | 4 | 8 | 9 | 10 | 11 | 12;
  /** Default: `power-loss <the cell's title>`. */
  title?: string;
  /** What its operations are called in the steps, e.g. `appends`. */
  what: string;
  /** Its kills, in order, when the options name none (default: `ack`, then `random`). */
  kills?: readonly PowerLossKill[];
  /** The crash points the `ack` kill needs the target to list (skipped otherwise; default none). */
  ackPoints?: readonly string[];
  /** One recorded run. */
  run: (options: PowerLossRunOptions) => Promise<PowerLossRun>;
}

/**
 * A cell that runs one recorded run per kill on the current leg and asserts each.
 *
 * @param spec The cell: its number, what its operations are called, its run, its kills.
 * @param options Target, leg, kills, states.
 * @returns The test definitions.
 * @example
 * ```ts ignore
 * import { powerLossKillCell } from "./steps.ts";
 * import { powerLossPrefixRun } from "../prefix_durability/power_loss.ts";
 * const target = new URL("../reference_target.ts", import.meta.url);
 * const spec = { id: 1, what: "appends", run: powerLossPrefixRun } as const;
 * for (const test of await powerLossKillCell(spec, { target })) Deno.test(test);
 * ```
 */
export function powerLossKillCell(
  spec: KillCellSpec,
  options: PowerLossOptions,
): Promise<Deno.TestDefinition[]> {
  const { kills = ["ack", "random"], ackPoints = [] } = spec;
  return powerLossCell({
    id: spec.id,
    ...(spec.title ? { title: spec.title } : {}),
    async run(ctx, t) {
      const points = ackPoints.length ? (await loadTarget(ctx.target)).crashPoints?.() ?? [] : [];
      for (const kill of options.kills ?? kills) {
        if (kill === "ack" && !ackPoints.every((p) => points.includes(p))) continue;
        const run = await spec.run({
          ...options,
          leg: ctx.leg,
          target: ctx.target,
          dir: ctx.run.file(kill),
          kill,
          progress: ctx.progress,
        });
        await powerLossSteps(ctx, t, { what: spec.what, run });
      }
    },
  }, options);
}
