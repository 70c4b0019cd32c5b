import { readAckJournal } from "../../harness/ack_journal.ts";
import type { StateCheck, StateJudgement } from "../engine/state_check.ts";
import type { StoredSession } from "../contract/target.ts";
import {
  parseAcks,
  type PowerLossOptions,
  type PowerLossRun,
  type PowerLossRunOptions,
} from "../power_loss/record.ts";
import { ackCrashEnv, writerRun } from "../power_loss/writer_run.ts";
import { powerLossKillCell } from "../power_loss/steps.ts";
import { type PowerLossResume, problemsOf } from "../power_loss/resume.ts";
import { type ChainAck, resumedChildOf } from "./_chain.ts";
import { chainTruth, missingAppends, reopenViolations, resumedViolations } from "./judge.ts";
import { type ChainState, readState, takeLock, viewHere } from "./state.ts";
import {
  endedAndSoundChecks,
  recoverChains,
  type ResumePlan,
  resumePlanOf,
  viewChecks,
} from "./_recovery.ts";
import { CHAIN_ROTATOR, RESUMER } from "./_children.ts";

const AFTER_COMMIT = "publishCompressionChild:afterCommit";

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

/** Where the resolution checks read their views: this process's two opens. */
const TWO = "in two recoveries";

/** Two fresh opens' views of how `ids` resolve. */
async function twoViews(target: string, db: string, ids: readonly string[]) {
  return [
    ["first recovery", await viewHere(target, db, ids)],
    ["second recovery", await viewHere(target, db, ids)],
  ] as const;
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
  const recovered = await recoverChains(target, db, acks);
  const { second, calls, state, truths } = recovered;
  const lost = [...missingAppends(acks, state.messages), ...lostRotations(acks, state.sessions)];
  const plan = resumePlanOf(truths, state, acks);
  const lock = plan ? await takeLock(target, db, plan.tip) : undefined;
  const views = await twoViews(target, db, truths.flatMap((truth) => truth.upToTip));
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
    ...viewChecks(truths, views, { sessions: state.sessions, where: TWO }),
    ...await endedAndSoundChecks(target, db, recovered),
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
    // It journals five acknowledgements and kills itself after the last.
    life: ({ db, acks }, judged) => ({
      script: RESUMER,
      args: [db, acks, judged.plan!.root],
      k: 5,
    }),
    async judge({ db, acks: more }, acks, judged) {
      const plan = judged.plan!;
      const resumed = readAckJournal<ChainAck>(more);
      const state = await readState(run.target, db);
      const chain = [...plan.upToTip, resumedChildOf(plan.tip)];
      const truth = chainTruth(chain, state.sessions, new Set([plan.tip]));
      const views = await twoViews(run.target, db, truth.upToTip);
      return [
        ...resumedViolations({ ...plan, acks: resumed, truth, messages: state.messages }),
        ...missingAppends(parseAcks<ChainAck>(acks), state.messages),
        ...problemsOf(viewChecks([truth], views, { sessions: state.sessions, where: TWO })),
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
      const env = ackCrashEnv(run, AFTER_COMMIT, () => rotations + Math.floor(random() * 2));
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
    what: "appends and rotations",
    kills: ["random", "ack"],
    ackPoints: [AFTER_COMMIT],
    run: powerLossResolutionRun,
  }, options);
}
