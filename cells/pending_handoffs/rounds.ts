// Cell 12's rounds: a file set up with handoffs in every state (re-requested after a failure
// and after a completion among them), then lives of two children working its sessions,
// SIGKILLed at a random instant, each judged and resumed.
import { readAckJournal } from "../../harness/ack_journal.ts";
import { type Child, reapAll } from "../../harness/child.ts";
import { waitFor } from "../../harness/wait_for.ts";
import type { CellRun } from "../engine/cell.ts";
import { tally } from "../engine/tally.ts";
import { killLanding } from "../moves/kill.ts";
import { openTargetStore, type Store } from "../contract/target.ts";
import type { HandoffEntry, HandoffState } from "./judge.ts";
import { judgeLife, resumeLife } from "./_life.ts";
import { HANDOFFS } from "./_children.ts";

type Op = "request" | "claim" | "complete" | "fail";

/** Each session's history at setup: what was done to it, in order. */
const HISTORIES: readonly (readonly Op[])[] = [
  [],
  ["request"],
  ["request", "claim"],
  ["request", "claim", "complete"],
  ["request", "claim", "fail"],
  ["request", "claim", "fail", "request"], // re-requested after a failed claim
  ["request", "claim", "complete", "request"], // re-requested after a completion
  ["request", "fail"],
  ["request", "fail", "request"], // re-requested after a failure while pending
  [],
  ["request"],
  [],
];

/** Runs one history step on `store`; throws when it is refused. */
async function apply(store: Store, id: string, op: Op): Promise<void> {
  const done = op === "request"
    ? await store.requestHandoff!(id, "cell12")
    : op === "claim"
    ? await store.claimHandoff!(id)
    : op === "complete"
    ? await store.completeHandoff!(id)
    : await store.failHandoff!(id, "cell12 setup");
  if (!done) throw new Error(`Setup: ${op} of ${id} was refused`);
}

/** A session to set up: its id, how many messages it holds, its handoff's history. */
interface SetUp {
  id: string;
  messages: number;
  history: readonly Op[];
}

/** Creates each session with its messages and handoff history; returns their states. */
async function setUp(
  target: string,
  db: string,
  sessions: readonly SetUp[],
): Promise<Record<string, HandoffState>> {
  const store = await openTargetStore(target, db);
  const states: Record<string, HandoffState> = {};
  try {
    for (const { id, messages, history } of sessions) {
      await store.createSession(id);
      for (let m = 0; m < messages; m++) {
        await store.appendMessage(id, { role: "user", content: `${id} turn ${m}` });
      }
      for (const op of history) await apply(store, id, op);
      states[id] = await store.getHandoffState!(id);
    }
  } finally {
    await store.close();
  }
  return states;
}

/**
 * Creates the sessions (0, 1 or 2 messages each) and their handoffs; histories that need
 * `completeHandoff` or `failHandoff` are left out when the store lacks it. Returns the
 * states.
 */
export function setUpHandoffs(
  target: string,
  db: string,
  settles: { complete: boolean; fail: boolean },
): Promise<Record<string, HandoffState>> {
  const sessions = HISTORIES.flatMap((history, i) =>
    (history.includes("complete") && !settles.complete) ||
      (history.includes("fail") && !settles.fail)
      ? []
      : [{ id: `h${String(i).padStart(2, "0")}`, messages: i % 3, history }]
  );
  return setUp(target, db, sessions);
}

/** Handoffs pending at once on the many-pending file: more than a page of a list holds. */
export const MANY_PENDING = 150;

/**
 * Sets up more pending handoffs than a page of a list holds (a LIMIT of 10, 50 or 100):
 * `MANY_PENDING` sessions, each requested, every fourth claimed too. Returns the states.
 */
export function setUpManyPending(
  target: string,
  db: string,
): Promise<Record<string, HandoffState>> {
  const sessions = Array.from({ length: MANY_PENDING }, (_, i): SetUp => ({
    id: `p${String(i).padStart(3, "0")}`,
    messages: 0,
    history: i % 4 === 3 ? ["request", "claim"] : ["request"],
  }));
  return setUp(target, db, sessions);
}

/** The acknowledgements in the journals so far. */
function acks(journals: readonly string[]): number {
  return journals.reduce(
    (n, path) => n + readAckJournal<HandoffEntry>(path).filter((e) => e.k === "ack").length,
    0,
  );
}

/** Two children on disjoint halves of the sessions, SIGKILLed once `count` operations are acknowledged. */
async function killedLife(
  ctx: CellRun,
  life: { db: string; round: number; start: Record<string, HandoffState>; count: number },
): Promise<HandoffEntry[]> {
  const ids = Object.keys(life.start);
  const journals: string[] = [];
  const children: Child[] = [];
  try {
    for (const half of [0, 1]) {
      const prefix = ctx.run.file(`round-${life.round}-w${half}`);
      const mine = Object.fromEntries(
        ids.filter((_, i) => i % 2 === half).map((id) => [
          id,
          life.start[id]!,
        ]),
      );
      Deno.writeTextFileSync(`${prefix}.start.json`, JSON.stringify(mine));
      const seed = String((ctx.seed + life.round * 2 + half) >>> 0);
      children.push(
        ctx.spawn(HANDOFFS, [life.db, "random", prefix, `${prefix}.start.json`, seed]),
      );
      journals.push(`${prefix}.jsonl`);
    }
    await waitFor(() => acks(journals) >= life.count, {
      what: `${life.count} acknowledged handoff operations`,
      deadlineMs: 60_000,
      children,
      observed: () => `${acks(journals)} acknowledged`,
      progress: ctx.progress(() => acks(journals)),
    });
    for (const child of children) await killLanding(child, "a handoff worker");
    tally(ctx, "sigkills", children.length);
  } finally {
    await reapAll(children);
  }
  ctx.observeLeg(life.db, `round ${life.round + 1}: random kill after ${life.count} operations`);
  return journals.flatMap((path) => readAckJournal<HandoffEntry>(path));
}

/**
 * The rounds: each a life killed at a random instant, judged, and resumed; the next round
 * starts from what the resume left. Stops at the first round that failed.
 *
 * @param ctx The cell's run.
 * @param t The test context.
 * @param run The file, its states after setup, how many rounds.
 * @example
 * ```ts ignore
 * import { handoffRounds } from "./rounds.ts";
 * await handoffRounds(ctx, t, { db, start, rounds: 3 });
 * ```
 */
export async function handoffRounds(
  ctx: CellRun,
  t: Deno.TestContext,
  run: { db: string; start: Record<string, HandoffState>; rounds: number },
): Promise<void> {
  let start = run.start;
  const counts: number[] = [];
  for (let round = 0; round < run.rounds; round++) {
    const count = 3 + Math.floor(ctx.random() * 30);
    counts.push(count);
    const entries = await killedLife(ctx, { db: run.db, round, start, count });
    const label = `round ${round + 1}`;
    const read = await judgeLife(ctx, t, { label, db: run.db, start, entries });
    if (!read) break;
    const resumed = await resumeLife(ctx, t, { label, db: run.db, read });
    if (!resumed) break;
    start = resumed.states;
  }
  ctx.note("killAfterOps", counts);
}
