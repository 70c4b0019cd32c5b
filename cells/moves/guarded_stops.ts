// Stops inside guarded writes (cells 2, 3, 4, 7, 8): a store that checks a guard (a fence, a
// state, a lock) in one read and writes in a separate transaction passes every stop made
// before it calls the operation. For k = 1, 2, … an actor child (after becoming an owner, if
// the scenario says) is stopped (SIGSTOP, through the LD_PRELOAD recorder) just before the
// k-th lock call inside its guarded write; during the stop another process, its store
// already open, looks whether the write landed and moves (takes over, claims, settles,
// rotates, rewinds); the actor is continued and finishes; then the other process acts. A
// write acknowledged after a move that committed during the stop, before the write landed,
// was based on a check made before the stop: an atomic store refuses it and keeps nothing of
// it. The walk ends when the write completes before its k-th lock call; at least one move
// must land during a stop, else nothing was judged (a `HarnessError`).
import { HarnessError } from "../../harness/harness_error.ts";
import { exists } from "../../internal/fs.ts";
import type { CellRun } from "../engine/cell.ts";
import {
  competitorWalkNames,
  readReport,
  stopBeforeLockCall,
  type StopResult,
  walkLockStops,
} from "./stop_at_lock.ts";
import { seriesRecorder } from "./kill_series.ts";
import { type Answer, describeAnswer, verdict } from "../contract/typed.ts";
import { loadTarget, openTargetStore, type Store } from "../contract/target.ts";
import { FENCE_CHILD } from "./_children.ts";
import { rotatedChainTrace } from "./_rotated_chain.ts";
import { untilExited } from "./kill.ts";

/**
 * A guarded write the series walks: the actor's write, what the new owner does during the
 * stop, and what must hold when the new owner's move committed during the stop, before the
 * actor's write landed (`children/fence_child.ts` plays both roles).
 */
export interface StopScenario {
  /** The scenario's name (the child's). */
  name: string;
  /** The store method the actor is stopped in (no crash point there: the series runs). */
  write: string;
  /** What the scenario shows, for step names. */
  what: string;
  /** Messages the session starts with (default one). */
  messages?: number;
  /** Whether the session starts with a pending handoff. */
  handoff?: boolean;
  /** Whether the actor's write must then be refused (not when an atomic store may accept it). */
  refused: boolean;
  /** Whether the new owner's work after the actor must be accepted. */
  acted?: boolean;
  /** The stale write's trace on the file, or `undefined` when there is none. */
  trace?(store: Store, shared: Record<string, unknown>): Promise<string | undefined>;
  /** Whether two fresh processes (the child's `check` role) read the trace too. */
  fresh?: boolean;
}

const handoffIs = (want: string) => async (store: Store) => {
  const state = await store.getHandoffState!(SESSION);
  return state === want ? undefined : `the handoff is ${state}, not ${want}`;
};
const obligationIs = (want: string) => async (store: Store, shared: Record<string, unknown>) => {
  // The id as the store gave it (a number from one whose ids are numbers): passed back as it is.
  const state = (await store.getObligation!(shared.id as string))?.state;
  return state === want ? undefined : `the obligation is ${state}, not ${want}`;
};
const sessionAbsent = (id: string) => async (store: Store) =>
  (await store.listSessions!()).some((s) => s.id === id) ? `${id} exists` : undefined;
const staleKept = (content: string, trace: string) => async (store: Store) =>
  (await store.getMessages(SESSION)).some((m) => m.content === content) ? trace : undefined;

/** The scenarios, by name. */
export const STOP_SCENARIOS: Record<string, StopScenario> = {
  publish: {
    name: "publish",
    write: "publishCompressionChild",
    what: "a publish after its lock was taken over",
    refused: true,
    acted: true,
    trace: sessionAbsent("child-stale"),
  },
  release: {
    name: "release",
    write: "releaseCompressionLock",
    what: "a release after the lock was taken over",
    refused: false,
    acted: true,
  },
  acquire: {
    name: "acquire",
    write: "tryAcquireCompressionLock",
    what: "an acquisition after another process took the lock",
    refused: true,
    acted: true,
  },
  reopen: {
    name: "reopen",
    write: "reopenOrphanedCompressionSession",
    what: "a reopen of an orphan whose lock another process took meanwhile",
    refused: true,
    async trace(store) {
      const orphan = (await store.listSessions!()).find((s) => s.id === SESSION);
      return orphan?.endedAt === null
        ? "the orphan reopened under a live holder's lock"
        : undefined;
    },
  },
  reopenRotated: {
    name: "reopenRotated",
    write: "reopenSession",
    what: "a reopen of a session the user ended, reopened and rotated meanwhile",
    refused: true,
    trace: (store) => rotatedChainTrace(store, { parent: SESSION, child: "child-new" }),
    fresh: true,
  },
  append: {
    name: "append",
    write: "appendMessage",
    what: "an append to a session rotated meanwhile",
    refused: true,
    trace: staleKept("stale append", "the rotated session holds the stale append"),
  },
  batchEnded: {
    name: "batchEnded",
    write: "appendMessages",
    what: "a batch to a session ended meanwhile",
    refused: true,
    trace: staleKept("stale batch", "the ended session holds the stale batch"),
  },
  fork: {
    name: "fork",
    write: "forkSession",
    what: "a fork at a message rewound meanwhile",
    messages: 4,
    refused: true,
    trace: sessionAbsent("branch-stale"),
  },
  request: {
    name: "request",
    write: "requestHandoff",
    what: "a request of a handoff requested and claimed meanwhile",
    refused: true,
    trace: handoffIs("running"),
  },
  complete: {
    name: "complete",
    write: "completeHandoff",
    what: "a completion after the handoff was failed and claimed anew",
    handoff: true,
    refused: true,
    acted: true,
  },
  completeFailed: {
    name: "completeFailed",
    write: "completeHandoff",
    what: "a completion after the handoff was failed",
    handoff: true,
    refused: true,
    trace: handoffIs("failed"),
  },
  failCompleted: {
    name: "failCompleted",
    write: "failHandoff",
    what: "a failure of a handoff completed meanwhile",
    handoff: true,
    refused: true,
    trace: handoffIs("completed"),
  },
  delivered: {
    name: "delivered",
    write: "markDelivered",
    what: "a delivery mark after the attempt was settled unknown",
    refused: true,
    trace: obligationIs("unknown"),
  },
  unknownDelivered: {
    name: "unknownDelivered",
    write: "markUnknown",
    what: "an unknown mark of an attempt delivered meanwhile",
    refused: true,
    trace: obligationIs("delivered"),
  },
  unknownAttempted: {
    name: "unknownAttempted",
    write: "markUnknown",
    what: "an unknown mark of an obligation attempted meanwhile",
    refused: true,
    trace: obligationIs("attempting"),
  },
};

const SESSION = "fenced-stop";

interface Took {
  took: unknown;
  /** What the store answered the new owner's move. */
  answer: Answer;
  landed: boolean;
  acted: Answer | null;
}

/** Creates the scenario's session (its messages, its pending handoff) on `db`. */
async function setUp(ctx: CellRun, scenario: StopScenario, db: string): Promise<void> {
  const setup = await openTargetStore(ctx.target, db);
  try {
    await setup.createSession(SESSION);
    for (let i = 0; i < (scenario.messages ?? 1); i++) {
      const role = i % 2 === 0 ? "user" : "assistant";
      await setup.appendMessage(SESSION, { role, content: `turn ${i}` });
    }
    if (scenario.handoff) await setup.requestHandoff!(SESSION, "cell7");
  } finally {
    await setup.close();
  }
}

/**
 * Judges one stop: when the new owner's move committed while the actor was stopped,
 * before its write landed, an atomic guarded write checks its guard inside its own
 * transaction, after that: the stale write is refused and leaves no trace, and the new
 * owner's work is accepted.
 */
async function judgeStop(
  ctx: CellRun,
  stop: { scenario: StopScenario; label: string; dir: string; movedInTime: boolean },
): Promise<Omit<StopResult, "stopped">> {
  const { scenario, label, dir } = stop;
  const out = `${dir}/out.json`;
  const stale = readReport<Answer>(out);
  const took = readReport<Took>(`${out}.owner`);
  if (!stale || !took) {
    throw new Error(`${label}: the children did not report (${stale}, ${took})`);
  }
  const raced = stop.movedInTime && took.took === true && !took.landed;
  if (!raced) {
    return took.took === true ? { raced } : { raced, refused: describeAnswer(took.answer) };
  }
  const problems: string[] = [];
  if (scenario.refused && verdict(stale) === "accepted") {
    problems.push(`the stale ${scenario.write} was acknowledged (${describeAnswer(stale)})`);
  }
  const store = await openTargetStore(ctx.target, `${dir}/db/store.db`);
  try {
    const found = await scenario.trace?.(store, readReport(`${dir}/shared.json`) ?? {});
    if (found) problems.push(`the file shows ${found}`);
  } finally {
    await store.close();
  }
  if (scenario.fresh) problems.push(...await freshTraces(ctx, scenario, dir));
  const acted = took.acted;
  if (scenario.acted && acted && verdict(acted) !== "accepted") {
    problems.push(`the new owner's work was refused afterwards (${describeAnswer(acted)})`);
  }
  return problems.length
    ? {
      raced,
      violation: `${
        problems.join("; ")
      }, although the new owner's move committed while the actor was stopped, before its write landed (the guard was checked before the stop)`,
    }
    : { raced };
}

/** The trace as two fresh processes read it, one after the other: the problems each saw. */
async function freshTraces(
  ctx: CellRun,
  scenario: StopScenario,
  dir: string,
): Promise<string[]> {
  const problems: string[] = [];
  for (const i of [1, 2]) {
    const file = `${dir}/out.json.check${i}`;
    const db = `${dir}/db/store.db`;
    const args = [db, scenario.name, "check", file, `${dir}/go`, SESSION, `${dir}/shared.json`];
    const child = ctx.spawn(FENCE_CHILD, args);
    await untilExited(child, `fresh process ${i} to read the state`);
    const seen = readReport<{ problem: string | null }>(file);
    if (!seen) throw new Error(`fresh process ${i} did not report: ${child.describe()}`);
    if (seen.problem) problems.push(`a fresh process ${i} reads ${seen.problem}`);
  }
  return problems;
}

/** One stop: the outcome, or why no order of an atomic fenced write gives it. */
function stopAt(
  ctx: CellRun,
  scenario: StopScenario,
  k: number,
  library: string,
): Promise<StopResult> {
  const dir = ctx.run.file(`stop-${scenario.name}-${k}`);
  const db = `${dir}/db/store.db`;
  const go = `${dir}/go`;
  const out = `${dir}/out.json`;
  const label = `${scenario.write} stopped before lock call ${k} (${scenario.what})`;
  const spawn = (role: "actor" | "owner", env?: Record<string, string>) => {
    const file = role === "actor" ? out : `${out}.owner`;
    const args = [db, scenario.name, role, file, go, SESSION, `${dir}/shared.json`];
    return ctx.spawn(FENCE_CHILD, args, env ? { env } : {});
  };
  return stopBeforeLockCall(ctx, {
    k,
    label,
    dir,
    library,
    setup: (db) => setUp(ctx, scenario, db),
    actors: {
      what: "the actor",
      spawn: (env) => spawn("actor", env),
      checkStop() {
        if (!exists(`${out}.acquired`)) {
          throw new HarnessError(`${label}: the actor stopped before its write`);
        }
      },
    },
    competitor: {
      what: "the new owner",
      spawn: (env) => [spawn("owner", env)],
      ready: () => exists(`${out}.owner.ready`),
      go,
      took: () => exists(`${out}.owner.took`),
    },
    judge: ({ movedInTime }) => judgeStop(ctx, { scenario, label, dir, movedInTime }),
  });
}

/**
 * Walks the lock calls of a scenario's guarded write, the new owner moving at each stop,
 * and fails a step on a stale write that went through. Checks that the interleave happened:
 * at least one move committed while the actor was stopped (else a `HarnessError`).
 */
async function walkStops(
  ctx: CellRun,
  t: Deno.TestContext,
  scenario: StopScenario,
): Promise<void> {
  const library = await seriesRecorder(`stop series ${scenario.name}`);
  const key = `stopSeries.${scenario.name}`;
  await walkLockStops(ctx, t, {
    names: competitorWalkNames({
      key,
      write: scenario.write,
      what: scenario.what,
      mover: "the new owner",
    }),
    stopAt: (k) => stopAt(ctx, scenario, k, library),
  });
}

/**
 * Runs each named scenario (`STOP_SCENARIOS`) whose write the target declares no crash
 * point in.
 *
 * @param ctx The cell's run.
 * @param t The test context the steps are taken in.
 * @param names The scenarios, by name.
 * @example
 * ```ts ignore
 * import { stopSeries } from "./guarded_stops.ts";
 * await stopSeries(ctx, t, ["publish", "release", "acquire"]);
 * ```
 */
export async function stopSeries(
  ctx: CellRun,
  t: Deno.TestContext,
  names: readonly string[],
): Promise<void> {
  const points = (await loadTarget(ctx.target)).crashPoints?.() ?? [];
  for (const name of names) {
    const scenario = STOP_SCENARIOS[name]!;
    if (!points.some((p) => p.startsWith(`${scenario.write}:`))) {
      await walkStops(ctx, t, scenario);
    }
  }
}
