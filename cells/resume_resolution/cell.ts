import { readAckJournal } from "../../harness/ack_journal.ts";
import { reapAll } from "../../harness/child.ts";
import { type CellRun, defineCell } from "../engine/cell.ts";
import type { CellOptions } from "../engine/options.ts";
import { checkSteps, soundness, type StateCheck } from "../engine/state_check.ts";
import { startTallies, tally } from "../engine/tally.ts";
import { loadTarget } from "../contract/target.ts";
import { crashAtPoint, killAfterAcks } from "../moves/kill.ts";
import { killSeries, seriesKind } from "../moves/kill_series.ts";
import { resumedStep } from "../moves/resume.ts";
import { raceSeriesOf } from "../moves/race.ts";
import { stopSeries } from "../moves/guarded_stops.ts";
import { type ChainAck, resumedChildOf } from "./_chain.ts";
import { CHAIN_ROTATOR, RESOLVER, RESUMER } from "./_children.ts";
import { chainTruth, missingAppends, reopenViolations, resumedViolations } from "./judge.ts";
import { liveHolderOrphan } from "./live_holder.ts";
import { type ChainState, readState, takeLock, viewHere } from "./state.ts";
import {
  endedAndSoundChecks,
  recoverChains,
  type RecoveredChains,
  type ResumePlan,
  resumePlanOf,
  viewChecks,
} from "./_recovery.ts";
import { withStore } from "../contract/with_store.ts";
import type { ResolutionView } from "./_chain.ts";
import { untilExited } from "../moves/kill.ts";
import { readReport } from "../../internal/report_line.ts";

/**
 * Options of {@linkcode resumeResolutionCell}.
 *
 * @example
 * ```ts
 * import { resumeResolutionCell, type ResumeResolutionOptions } from "./cell.ts";
 * const options: ResumeResolutionOptions = {
 *   target: new URL("../reference_target.ts", import.meta.url),
 *   minAcknowledged: 12,
 * };
 * for (const test of await resumeResolutionCell(options)) Deno.test(test);
 * ```
 */
export interface ResumeResolutionOptions extends CellOptions {
  /** Acknowledged appends and rotations before the random kill (default 20: three chains). */
  minAcknowledged?: number;
  /** How long to wait for them (default 60 s). */
  deadlineMs?: number;
  /** Also crash at every `publishCompressionChild:*` point the target lists (default true). */
  crashPoints?: boolean;
}

/** What cell 8's phases share. */
interface ResolutionRun {
  ctx: CellRun;
  t: Deno.TestContext;
  options: ResumeResolutionOptions;
}

/** A killed life's files. */
interface LifeFiles {
  db: string;
  acksPath: string;
}

/** Two fresh processes resolving `ids` at once, each printing its view. */
async function freshViews(ctx: CellRun, db: string, ids: readonly string[]) {
  const children = [0, 1].map(() => ctx.spawn(RESOLVER, [db, JSON.stringify(ids)]));
  try {
    await Promise.all(children.map((c, i) => untilExited(c, `fresh resolver ${i + 1}`)));
  } finally {
    await reapAll(children);
  }
  return children.map((child, i) => {
    if (child.exited?.code !== 0) {
      throw new Error(`fresh resolver ${i + 1} failed: ${child.describe()}`);
    }
    const view = readReport<ResolutionView>(child.stdout);
    if (!view) throw new Error(`fresh resolver ${i + 1} printed no report: ${child.describe()}`);
    return view;
  });
}

/** The orphan recovery's check, or `undefined` when the store offers none. */
function reopenCheck(
  calls: RecoveredChains["calls"],
  before: ChainState,
  after: ChainState,
): StateCheck[] {
  if (calls === undefined) return [];
  return [{
    name:
      "reopenOrphanedCompressionSession reopens every orphan, refuses every parent with a continuation, changes nothing else",
    violations: reopenViolations(calls, before, after),
    missing: [],
  }];
}

/**
 * Judges a killed life's file: the orphan recovery (when the store offers it), one live tip
 * per chain, the dead rotator's lock free at once, resolution in four views, appends to
 * ended parents refused, recovery deterministic. Returns what a second life continues.
 */
async function checkState(
  cell: ResolutionRun,
  label: string,
  files: LifeFiles,
): Promise<ResumePlan | undefined> {
  const { ctx, t } = cell;
  const { db, acksPath } = files;
  const acks = readAckJournal<ChainAck>(acksPath);
  const recovered = await recoverChains(ctx.target, db, acks);
  const { second, calls, state, truths } = recovered;
  const missing = missingAppends(acks, state.messages);
  tally(ctx, "acknowledgedOps", acks.length);
  tally(ctx, "lost", missing.length);
  const plan = resumePlanOf(truths, state, acks);
  const lock = plan ? await takeLock(ctx.target, db, plan.tip) : undefined;
  const ids = truths.flatMap((truth) => truth.upToTip);
  const views: [string, ResolutionView][] = [
    ["this process", await viewHere(ctx.target, db, ids)],
    ["a second reopen", await viewHere(ctx.target, db, ids)],
    ...(await freshViews(ctx, db, ids)).map((v, i) =>
      [`fresh process ${i + 1}`, v] as [
        string,
        ResolutionView,
      ]
    ),
  ];
  // Optional methods the store lacks are named, never counted as judged.
  if (!views[0]![1].live) ctx.note("findLiveCompressionChild", "absent: not judged");
  if (!calls) ctx.note("reopenOrphanedCompressionSession", "absent: own recovery judged");
  const lastChecks = await endedAndSoundChecks(ctx.target, db, recovered);
  ctx.note(`${label}.tips`, truths.map((truth) => truth.tip ?? "none"));
  await checkSteps(t, [
    ...reopenCheck(calls, second, state),
    {
      name: "every chain has exactly one live tip, every acknowledged append and rotation kept",
      violations: truths.flatMap((truth) => truth.violations),
      missing,
    },
    {
      name: "a fresh holder takes the in-flight tip's lock at once (no lock outlives its holder)",
      violations: lock && lock.taken !== true
        ? [
          `tryAcquireCompressionLock(${plan?.tip}) by another holder returned ${lock.taken} (${lock.tookMs} ms) after the rotator holding it was killed`,
        ]
        : [],
      missing: [],
    },
    ...viewChecks(truths, views, { sessions: state.sessions }),
    ...lastChecks,
  ], `${label}: `);
  return plan;
}

/**
 * Resume after recovery: a fresh process resolves the in-flight chain's root, appends
 * through the tip, rotates it, appends through the new tip and kills itself; both lives'
 * acknowledged work must hold and the chain resolve to its new tip in two opens.
 */
async function resumeState(
  cell: ResolutionRun,
  label: string,
  files: LifeFiles,
  plan: ResumePlan,
): Promise<void> {
  const { ctx, t } = cell;
  const { db, acksPath } = files;
  const resumedAcks = `${acksPath}.resumed.jsonl`;
  const args = [db, resumedAcks, plan.root];
  const ops = "append, rotation and append through the resolved tip";
  if (!await resumedStep(ctx, t, { ops, script: RESUMER, args, db, label })) return;
  const acks = readAckJournal<ChainAck>(resumedAcks);
  tally(ctx, "acknowledgedOps", acks.length);
  const first = await readState(ctx.target, db);
  const second = await readState(ctx.target, db);
  const chain = [...plan.upToTip, resumedChildOf(plan.tip)];
  const truth = chainTruth(chain, first.sessions, new Set([plan.tip]));
  const views: [string, ResolutionView][] = [
    ["this process", await viewHere(ctx.target, db, truth.upToTip)],
    ["a second reopen", await viewHere(ctx.target, db, truth.upToTip)],
  ];
  const before = readAckJournal<ChainAck>(acksPath);
  const lost = missingAppends(before, first.messages);
  tally(ctx, "lost", lost.length);
  await checkSteps(t, [
    {
      name:
        "the append through the resolved tip lands after the chain and reads back; the chain takes a further rotation",
      violations: resumedViolations({ ...plan, acks, truth, messages: first.messages }),
      missing: lost,
    },
    ...viewChecks([truth], views, { sessions: first.sessions }),
    {
      name: "recovery deterministic, integrity and invariants",
      violations: soundness(db, [first, second], first.invariants),
      missing: [],
    },
  ], `${label}, resumed: `);
}

/** Judges a killed life, then resumes it. */
async function judgeLife(cell: ResolutionRun, label: string, files: LifeFiles): Promise<void> {
  const plan = await checkState(cell, label, files);
  if (plan) await resumeState(cell, label, files, plan);
}

/** The chain rotator SIGKILLed at a random moment past the threshold. */
async function randomKill(cell: ResolutionRun): Promise<void> {
  const { ctx, options } = cell;
  const files = { db: ctx.run.store("store"), acksPath: ctx.run.file("acks.jsonl") };
  const child = ctx.spawn(CHAIN_ROTATOR, [files.db, files.acksPath]);
  await killAfterAcks(ctx, child, {
    ...files,
    count: options.minAcknowledged ?? 20,
    what: "appends and rotations",
    deadlineMs: options.deadlineMs,
  });
  await judgeLife(cell, "random kill", files);
}

/**
 * Inside a publish with no declared crash point: a kill at each of its calls (the second
 * rotation's: chain c0's, so the first was acknowledged), each state judged and resumed.
 */
async function publishSeries(cell: ResolutionRun, points: readonly string[]): Promise<void> {
  const kind = seriesKind(cell.options.killSeries);
  if (kind === "off" || points.length > 0) return;
  const plans = new Map<string, ResumePlan | undefined>();
  const files = (db: string, dir: string) => ({ db, acksPath: `${dir}/acks.jsonl` });
  await killSeries(cell.ctx, cell.t, {
    op: "publishCompressionChild",
    occurrence: 2,
    script: CHAIN_ROTATOR,
    args: (db, dir) => [db, `${dir}/acks.jsonl`],
    check: async (db, dir, label) =>
      void plans.set(db, await checkState(cell, label, files(db, dir))),
    resume: async (db, dir, label) => {
      const plan = plans.get(db);
      if (plan) await resumeState(cell, label, files(db, dir), plan);
    },
    kind,
  });
}

/** A fresh rotator dying at each `publishCompressionChild:*` point in its second rotation. */
async function crashPointKills(cell: ResolutionRun, points: readonly string[]): Promise<void> {
  const { ctx, t } = cell;
  ctx.note("crashPoints", points);
  for (const point of points) {
    const args = ({ db, acksPath }: LifeFiles) => [db, acksPath];
    const files = await crashAtPoint({ ctx, t }, { point, nth: 2, script: CHAIN_ROTATOR, args });
    await judgeLife(cell, point, files);
  }
}

/**
 * Cell 8, resume resolution: after a crash anywhere in a rotation (and in chains of two,
 * `c<j>-0` -> `c<j>-1` -> `c<j>-2`), `resolveResumeSessionId` of every session of a chain
 * returns its one live tip, the same in this process, after a second reopen and in two
 * fresh processes; `findLiveCompressionChild`, when present, agrees; an orphan (a parent
 * ended by compression whose child never published) is reopened by
 * `reopenOrphanedCompressionSession` or by the store's own recovery, and a parent with a
 * continuation is not; the dead rotator's lock is free at once; appends to ended parents
 * are refused with `CompressionSessionClosedError`; a fresh process appends through the
 * resolved tip after everything the chain held, rotates it, appends again and is killed,
 * and the chain resolves to its new tip. States: a random kill, a kill series inside the
 * second publish (when the target declares no `publishCompressionChild:*` point) or a kill
 * at each declared point. And an orphan whose lock holder lives is not reopened, then is,
 * at once, when the holder is killed; with the race series on, that reopen is stopped before
 * each of its lock calls while another process takes the orphan's lock, and (with
 * `reopenSession` and `endSession`) a user-ended session's reopen is stopped before each of
 * its lock calls while another process reopens and rotates it: never two live tips. Every leg.
 *
 * @param options Target, leg, thresholds.
 * @returns The test definitions to register with `Deno.test`.
 * @example
 * ```ts
 * import { resumeResolutionCell } from "./cell.ts";
 * const target = new URL("../reference_target.ts", import.meta.url);
 * for (const test of await resumeResolutionCell({ target })) Deno.test(test);
 * ```
 */
export function resumeResolutionCell(
  options: ResumeResolutionOptions,
): Promise<Deno.TestDefinition[]> {
  return defineCell({
    id: 8,
    preloads: true,
    run: (ctx, t) => resolutionRun({ ctx, t, options }),
  }, options);
}

/**
 * Cell 8's phases: the random kill, the kill series or crash points, the live holder, and
 * with the race series on, the reopens' stop series.
 */
async function resolutionRun(cell: ResolutionRun): Promise<void> {
  const { ctx, t, options } = cell;
  startTallies(ctx);
  await randomKill(cell);
  const points = ((await loadTarget(ctx.target)).crashPoints?.() ?? [])
    .filter((p) => p.startsWith("publishCompressionChild:"));
  await publishSeries(cell, points);
  if (options.crashPoints !== false) await crashPointKills(cell, points);
  const orphanable = await liveHolderOrphan(ctx, t);
  if (raceSeriesOf(options.raceSeries) !== "locks") return;
  // The orphan's reopen stopped inside while another process takes the orphan's lock; a
  // user-ended session's reopen stopped inside while another process reopens and rotates it.
  const names = orphanable ? ["reopen"] : [];
  if (await reopensSessions(ctx)) names.push("reopenRotated");
  await stopSeries(ctx, t, names);
}

/** Whether the store has `reopenSession` and `endSession` (else the stop series' part is named). */
async function reopensSessions(ctx: CellRun): Promise<boolean> {
  const db = ctx.run.store("reopen-probe");
  const missing = await withStore(
    ctx.target,
    db,
    (store) => Promise.resolve((["reopenSession", "endSession"] as const).filter((m) => !store[m])),
  );
  if (missing.length) ctx.note("stopSeries.reopenRotated", `left out: no ${missing.join(", ")}`);
  return !missing.length;
}
