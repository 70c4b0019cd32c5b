// What cell 8's SIGKILL cell and its power-loss cell both do with a killed life's file:
// recover it (two reads, the orphans reopened), find each chain's truth and the in-flight
// chain a second life continues, and check the resolution views, the refused appends to
// ended parents and the recovery's soundness.
import { soundness, type StateCheck } from "../engine/state_check.ts";
import type { StoredSession } from "../contract/target.ts";
import type { ChainAck, ResolutionView } from "./_chain.ts";
import {
  type ChainTruth,
  chainTruth,
  endedAppendViolations,
  firstLifeChains,
  viewViolations,
} from "./judge.ts";
import { type ChainState, probeEndedAppends, readState, reopenOrphans } from "./state.ts";

/** A killed life's file, recovered. */
export interface RecoveredChains {
  /** The first and second fresh reads, before any orphan is reopened. */
  first: ChainState;
  second: ChainState;
  /** The orphan recovery's answers (`undefined`: the store offers none). */
  calls: Awaited<ReturnType<typeof reopenOrphans>>;
  /** The state judged: the second read, or a read after the orphans were reopened. */
  state: ChainState;
  /** Each first-life chain's truth in that state. */
  truths: ChainTruth[];
}

/** What a resumed life continues: the in-flight chain as the crash left it. */
export interface ResumePlan {
  /** The chain's root. */
  root: string;
  /** Its sessions up to its live tip. */
  upToTip: string[];
  /** Its live tip. */
  tip: string;
  /** The highest message id in the chain, stored or acknowledged. */
  floor: number;
}

/**
 * Reads a killed life's file twice, runs the orphan recovery when the store offers it (and
 * reads again when it reopened any), and finds each first-life chain's truth against the
 * acknowledged rotations.
 */
export async function recoverChains(
  target: string,
  db: string,
  acks: readonly ChainAck[],
): Promise<RecoveredChains> {
  const first = await readState(target, db);
  const second = await readState(target, db);
  const calls = await reopenOrphans(target, db, first.sessions);
  const state = calls?.length ? await readState(target, db) : second;
  const acked = new Set(acks.flatMap((a) => a.op === "rotate" ? [a.parentId] : []));
  const truths = firstLifeChains(state.sessions, acks)
    .map((chain) => chainTruth(chain, state.sessions, acked));
  return { first, second, calls, state, truths };
}

/** The in-flight chain (the last with a live tip) a second life continues, if any. */
export function resumePlanOf(
  truths: readonly ChainTruth[],
  state: ChainState,
  acks: readonly ChainAck[],
): ResumePlan | undefined {
  const inFlight = truths.findLast((truth) => truth.tip !== undefined);
  if (!inFlight) return undefined;
  const stored = inFlight.upToTip.flatMap((id) => (state.messages[id] ?? []).map((m) => m.id));
  const acked = acks.flatMap((a) => a.op === "append" ? [a.id] : []);
  const floor = Math.max(0, ...stored, ...acked);
  return { root: inFlight.chain[0]!, upToTip: inFlight.upToTip, tip: inFlight.tip!, floor };
}

/**
 * The resolution checks over every view of one state: `resolveResumeSessionId` gives each
 * chain's live tip (in the views `where` names, by default each one's name in brackets),
 * and, when the store has it, `findLiveCompressionChild` agrees.
 */
export function viewChecks(
  truths: readonly ChainTruth[],
  views: readonly (readonly [string, ResolutionView])[],
  seen: { sessions: readonly StoredSession[]; where?: string },
): StateCheck[] {
  const { sessions, where = `(${views.map(([at]) => at).join(", ")})` } = seen;
  const found = views.map(([at, view]) => viewViolations(truths, view, { where: at, sessions }));
  const checks: StateCheck[] = [{
    name: `resolveResumeSessionId gives each chain's live tip ${where}`,
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

/**
 * The last checks of a recovered file: an append to every ended parent up to each chain's
 * tip is refused and changes nothing, and the recovery is deterministic and sound.
 */
export async function endedAndSoundChecks(
  target: string,
  db: string,
  recovered: RecoveredChains,
): Promise<StateCheck[]> {
  const { first, second, state, truths } = recovered;
  const ended = truths.flatMap((truth) => truth.upToTip.slice(0, -1));
  const probes = await probeEndedAppends(target, db, ended);
  return [
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
}
