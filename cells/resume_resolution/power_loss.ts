import { join } from "node:path";
import { readAckJournal } from "../../harness/ack_journal.ts";
import { soundness, type StateCheck, type StateJudgement } from "../engine/state_check.ts";
import type { StoredSession } from "../contract/target.ts";
import {
  parseAcks,
  type PowerLossOptions,
  type PowerLossRun,
  type PowerLossRunOptions,
} from "../power_loss/record.ts";
import { writerRun } from "../power_loss/writer_run.ts";
import { powerLossKillCell } from "../power_loss/steps.ts";
import { powerLossLife, type PowerLossResume, problemsOf } from "../power_loss/resume.ts";
import { type ChainAck, type ResolutionView, resumedChildOf } from "./_chain.ts";
import {
  type ChainTruth,
  chainTruth,
  endedAppendViolations,
  firstLifeChains,
  missingAppends,
  reopenViolations,
  resumedViolations,
  viewViolations,
} from "./judge.ts";
import {
  type ChainState,
  probeEndedAppends,
  readState,
  reopenOrphans,
  takeLock,
  viewHere,
} from "./state.ts";
import { CHAIN_ROTATOR, RESUMER } from "./_children.ts";

const AFTER_COMMIT = "publishCompressionChild:afterCommit";

/** The in-flight chain a second life continues, as the judge found it. */
interface ResumePlan {
  root: string;
  upToTip: string[];
  tip: string;
  /** The highest message id the chain holds or was acknowledged. */
  floor: number;
}

/** Cell 8's judgement of one state, with what a second life continues. */
interface ChainJudgement extends StateJudgement {
  plan?: ResumePlan;
  /** Appends and whole rotations the state holds beyond the acknowledged ones. */
  landed: boolean;
}

/** Whether `parent` was rotated into `child` in `byId`, whole. */
function whole(byId: ReadonlyMap<string, StoredSession>, parent: string, child: string): boolean {
  return byId.get(parent)?.endReason === "compression" &&
    byId.get(child)?.parentSessionId === parent;
}

/** The acknowledged rotations a state lost, in words. */
function lostRotations(acks: readonly ChainAck[], sessions: readonly StoredSession[]): string[] {
  const byId = new Map(sessions.map((s) => [s.id, s]));
  return acks.flatMap((a) =>
    a.op === "rotate" && !whole(byId, a.parentId, a.childId)
      ? [`acknowledged rotation ${a.parentId} -> ${a.childId} not whole`]
      : []
  );
}

/** The resolution checks of two recoveries (this process's two opens). */
function viewChecks(
  truths: readonly ChainTruth[],
  views: readonly (readonly [string, ResolutionView])[],
  sessions: readonly StoredSession[],
): StateCheck[] {
  const found = views.map(([where, view]) => viewViolations(truths, view, { where, sessions }));
  const checks: StateCheck[] = [{
    name: "resolveResumeSessionId gives each chain's live tip in two recoveries",
    violations: found.flatMap((f) => f.resolve),
    missing: [],
  }];
  if (views[0]?.[1].live) {
    checks.push({
      name: "findLiveCompressionChild names the live continuation exactly when there is one",
      violations: found.flatMap((f) => f.live),
      missing: [],
    });
  }
  return checks;
}

/** Two fresh opens' views of how `ids` resolve. */
async function twoViews(target: string, db: string, ids: readonly string[]) {
  return [
    ["first recovery", await viewHere(target, db, ids)],
    ["second recovery", await viewHere(target, db, ids)],
  ] as const;
}

/** What the in-flight chain's second life continues, when the state has a chain. */
function planOf(truths: readonly ChainTruth[], state: ChainState, acks: readonly ChainAck[]) {
  const inFlight = truths.findLast((truth) => truth.tip !== undefined);
  if (!inFlight) return undefined;
  const stored = inFlight.upToTip.flatMap((id) => (state.messages[id] ?? []).map((m) => m.id));
  const acked = acks.flatMap((a) => a.op === "append" ? [a.id] : []);
  const floor = Math.max(0, ...stored, ...acked);
  return { root: inFlight.chain[0]!, upToTip: inFlight.upToTip, tip: inFlight.tip!, floor };
}

/** Whether the state holds an append or a rotation nobody acknowledged yet. */
function landedOf(state: ChainState, acks: readonly ChainAck[]): boolean {
  const byId = new Map(state.sessions.map((s) => [s.id, s]));
  const rotations =
    state.sessions.filter((s) => s.parentSessionId !== null && whole(byId, s.parentSessionId, s.id))
      .length;
  const appends =
    Object.values(state.messages).flat().filter((m) => !m.content?.startsWith("summary of "))
      .length;
  return rotations + appends > acks.length;
}

/**
 * Judges one crash state with cell 8's judge: the orphan recovery (when the store offers
 * it), one live tip per chain with every acknowledged append and rotation kept, the dead
 * rotator's lock free, every session up to the tip resolving to it in two recoveries,
 * appends to ended parents refused, recovery deterministic, integrity, invariants.
 */
async function judgeChains(
  target: string,
  db: string,
  acks: readonly ChainAck[],
): Promise<ChainJudgement> {
  const first = await readState(target, db);
  const second = await readState(target, db);
  const calls = await reopenOrphans(target, db, first.sessions);
  const state = calls?.length ? await readState(target, db) : second;
  const acked = new Set(acks.flatMap((a) => a.op === "rotate" ? [a.parentId] : []));
  const truths = firstLifeChains(state.sessions, acks)
    .map((chain) => chainTruth(chain, state.sessions, acked));
  const lost = [...missingAppends(acks, state.messages), ...lostRotations(acks, state.sessions)];
  const plan = planOf(truths, state, acks);
  const lock = plan ? await takeLock(target, db, plan.tip) : undefined;
  const views = await twoViews(target, db, truths.flatMap((truth) => truth.upToTip));
  const probes = await probeEndedAppends(
    target,
    db,
    truths.flatMap((truth) => truth.upToTip.slice(0, -1)),
  );
  const checks: StateCheck[] = [
    ...(calls === undefined ? [] : [{
      name: "reopenOrphanedCompressionSession reopens every orphan, refuses the others",
      violations: reopenViolations(calls, second, state),
      missing: [],
    }]),
    {
      name: "every chain has exactly one live tip, every acknowledged append and rotation kept",
      violations: truths.flatMap((truth) => truth.violations),
      missing: lost,
    },
    {
      name: "a fresh holder takes the in-flight tip's lock at once",
      violations: lock && lock.taken !== true
        ? [`tryAcquireCompressionLock(${plan?.tip}) by another holder returned ${lock.taken}`]
        : [],
      missing: [],
    },
    ...viewChecks(truths, views, state.sessions),
    {
      name: "appends to ended parents refused with CompressionSessionClosedError, changing nothing",
      violations: endedAppendViolations(probes),
      missing: [],
    },
    {
      name: "recovery deterministic, integrity and invariants",
      violations: soundness(db, [first, second], state.invariants),
      missing: [],
    },
  ];
  return { checks, lost: lost.length, landed: landedOf(state, acks), ...(plan ? { plan } : {}) };
}

/**
 * Cell 8's second life: a fresh process resolves the in-flight chain's root, appends
 * through the tip, rotates it, appends through the new tip and kills itself; both lives'
 * acknowledged work must hold and the chain resolve to its new tip in two recoveries.
 */
function resumeChain(run: PowerLossRunOptions): PowerLossResume<ChainJudgement> {
  return {
    landed: (judged) => judged.landed,
    resumable: (judged) => judged.plan !== undefined,
    async continue(dir, acks, judged) {
      const plan = judged.plan!;
      const db = join(dir, "db", "store.db");
      const more = join(dir, "acks.jsonl");
      const why = await powerLossLife(run, {
        dir,
        script: RESUMER,
        args: [db, more, plan.root],
        acks: more,
        // It journals five acknowledgements and kills itself after the last.
        k: 5,
      });
      if (why) return [why];
      const resumed = readAckJournal<ChainAck>(more);
      const state = await readState(run.target, db);
      const chain = [...plan.upToTip, resumedChildOf(plan.tip)];
      const truth = chainTruth(chain, state.sessions, new Set([plan.tip]));
      const views = await twoViews(run.target, db, truth.upToTip);
      return [
        ...resumedViolations({ ...plan, acks: resumed, truth, messages: state.messages }),
        ...missingAppends(parseAcks<ChainAck>(acks), state.messages),
        ...problemsOf(viewChecks([truth], views, state.sessions)),
      ];
    },
  };
}

/**
 * One recorded run of cell 8's chain rotator: chains `c<j>-0 -> c<j>-1 -> c<j>-2` (appends
 * between chained rotations) under the file-system call recorder, SIGKILLed at a random
 * moment past `minAcknowledged` acknowledgements, or (`ack`) right after a rotation's
 * COMMIT by the crash point `publishCompressionChild:afterCommit`; then every crash state
 * is judged by cell 8's judge against the acknowledgements before its instant, and a
 * fresh process continues a few recovered states through the resolved tip.
 *
 * @param options Leg, target, folder, kill, thresholds, states.
 * @returns The counts.
 * @example
 * ```ts ignore
 * import { currentLeg } from "../../harness/legs.ts";
 * import { powerLossResolutionRun } from "./power_loss.ts";
 * const run = await powerLossResolutionRun({
 *   leg: currentLeg(),
 *   target: new URL("../reference_target.ts", import.meta.url).href,
 *   dir: Deno.makeTempDirSync(),
 *   kill: "random",
 * });
 * console.log(run.losingStates, run.corruptStates, run.statesChecked, run.resumes.run);
 * ```
 */
export function powerLossResolutionRun(options: PowerLossRunOptions): Promise<PowerLossRun> {
  return writerRun(options, {
    operations: 14,
    writer: ({ files, run, random }) => {
      // Two rotations a chain of seven acknowledgements: die after the k-th rotation's commit.
      const rotations = Math.max(2, Math.round(run.minAcknowledged / 3.5));
      const env: Record<string, string> = run.kill === "ack"
        ? { SESSION_DB_CRASH_AT: `${AFTER_COMMIT}@${rotations + Math.floor(random() * 2)}` }
        : {};
      return {
        script: CHAIN_ROTATOR,
        args: [files.db, files.acks],
        what: "appends and rotations",
        env,
      };
    },
    judging: (run) => ({
      judge: (db, lines) => judgeChains(run.target, db, parseAcks<ChainAck>(lines)),
      resume: resumeChain(run),
    }),
  });
}

/**
 * Cell 8 in the power-loss tier: the chain rotator runs under the recorder and is
 * SIGKILLed at a random moment and right after a rotation's COMMIT. In every power-loss
 * state every chain has one live tip, to which `resolveResumeSessionId` of each of its
 * sessions resolves, the same in two recoveries; an acknowledged (published) rotation
 * resolves to its child; orphans are reopened; integrity, invariants, recovery
 * deterministic; a fresh process continues a few recovered states through the resolved
 * tip. A store without `resolveResumeSessionId` is SKIPPED with the name.
 *
 * @param options Target, leg, thresholds, states.
 * @returns The test definitions.
 * @example
 * ```ts ignore
 * import { powerLossResolutionCell } from "./power_loss.ts";
 * const target = new URL("../reference_target.ts", import.meta.url);
 * for (const test of await powerLossResolutionCell({ target })) Deno.test(test);
 * ```
 */
export function powerLossResolutionCell(
  options: PowerLossOptions,
): Promise<Deno.TestDefinition[]> {
  return powerLossKillCell({
    id: 8,
    title: "power-loss resume resolution",
    what: "appends and rotations",
    kills: ["random", "ack"],
    ackPoints: [AFTER_COMMIT],
    run: powerLossResolutionRun,
  }, options);
}
