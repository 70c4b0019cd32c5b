// Cell 12's child, in one of three modes. Each operation is journaled before it is invoked
// (`inv`) and once the store answered (`ack`), with its sequence number.
// - `random`: requests, claims, completes and fails handoffs of its sessions (their states
//   at its start read from a file) in a seeded random order, until it is killed (or kills
//   itself right after its k-th acknowledged operation, when given k).
// - `script`: creates two sessions and makes a fixed sequence (a re-request after a failure,
//   a claim, a re-request after a completion), each operation bracketed by marks for the
//   kill series, then exits.
// - `resume`: requests one handoff, waits until the parent has looked at the list, claims
//   another (or the same), and waits to be killed.
import { AckWriter } from "../../../harness/ack_journal.ts";
import { awaitBarrier } from "../../../harness/barrier.ts";
import { TIMED_OUT } from "../../../harness/child.ts";
import { killSelf } from "../../../harness/self_kill.ts";
import {
  CHILD_LIFETIME_MS,
  childArgs,
  lifetimeGuard,
  marked,
  openStoreFor,
  waitToBeKilled,
} from "../../contract/child_runtime.ts";
import { answerOf } from "../../contract/typed.ts";

const [target, db, mode, prefix, ...rest] = childArgs(
  4,
  "handoffs.ts <target> <db> <random|script|resume> <file prefix> [<start file> <seed> [k] | <request> <claim>]",
);
const store = await openStoreFor(target!, db!);
const journal = new AckWriter(`${prefix}.jsonl`);
type Op = "requestHandoff" | "claimHandoff" | "completeHandoff" | "failHandoff";
let seq = 0;

/** Makes one operation, journaled before and after; returns its answer as a word. */
async function act(op: Op, session: string): Promise<string> {
  const n = seq++;
  journal.write({ k: "inv", seq: n, op, session });
  const answer = await answerOf(() =>
    marked(op, () => {
      if (op === "requestHandoff") return store.requestHandoff!(session, "cell12");
      if (op === "claimHandoff") return store.claimHandoff!(session);
      if (op === "completeHandoff") return store.completeHandoff!(session);
      return store.failHandoff!(session, "cell12 gave up");
    })
  );
  const word = answer.threw ? `threw ${answer.name}` : String(answer.value);
  journal.write({ k: "ack", seq: n, op, session, answer: word });
  return word;
}

/** A seeded random number in [0, 1) (mulberry32). */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The next operation for a session in `state`, as this child knows it. */
function choose(state: string | null, next: () => number): Op {
  const r = next();
  const can = (op: Op) => typeof store[op] === "function";
  if (state === "pending") {
    if (r < 0.25 && can("failHandoff")) return "failHandoff";
    return r < 0.9 ? "claimHandoff" : "requestHandoff";
  }
  if (state === "running") {
    if (r < 0.5 && can("completeHandoff")) return "completeHandoff";
    if (r < 0.9 && can("failHandoff")) return "failHandoff";
    return "claimHandoff";
  }
  return r < 0.9 ? "requestHandoff" : "claimHandoff";
}

const AFTER: Record<Op, string> = {
  requestHandoff: "pending",
  claimHandoff: "running",
  completeHandoff: "completed",
  failHandoff: "failed",
};

async function randomOps(): Promise<void> {
  const states = JSON.parse(Deno.readTextFileSync(rest[0]!)) as Record<string, string | null>;
  const sessions = Object.keys(states);
  const next = random(Number(rest[1]));
  const killAfter = rest[2] === undefined ? Infinity : Number(rest[2]);
  const guard = lifetimeGuard();
  for (let acknowledged = 0;; acknowledged++) {
    guard();
    if (acknowledged >= killAfter) killSelf();
    const session = sessions[Math.floor(next() * sessions.length)]!;
    const op = choose(states[session]!, next);
    if (await act(op, session) === "true") states[session] = AFTER[op];
    // A typed refusal of its own completion (another process claimed it): read it again.
    else if (op === "completeHandoff") states[session] = await store.getHandoffState!(session);
  }
}

async function script(): Promise<void> {
  for (const id of ["A", "B"]) await store.createSession(id);
  await store.appendMessage("A", { role: "user", content: "one" });
  await store.appendMessage("A", { role: "user", content: "two" });
  const steps: [Op, string][] = [
    ["requestHandoff", "A"],
    ["claimHandoff", "A"],
    ["failHandoff", "A"],
    ["requestHandoff", "A"], // #4: a re-request after a failure
    ["requestHandoff", "B"],
    ["claimHandoff", "B"], // #6: a claim
    ["completeHandoff", "B"],
    ["requestHandoff", "B"], // #8: a re-request after a completion
  ];
  for (const [op, session] of steps) await act(op, session);
  journal.close();
  await store.close();
}

async function resume(): Promise<void> {
  const [request, claim] = rest;
  await act("requestHandoff", request!);
  if (!awaitBarrier(`${prefix}.seen`, CHILD_LIFETIME_MS)) Deno.exit(TIMED_OUT);
  await act("claimHandoff", claim!);
  journal.close();
  waitToBeKilled(`${prefix}.ready`);
}

const MODES: Record<string, () => Promise<void>> = { random: randomOps, script, resume };
const run = MODES[mode!];
if (!run) throw new Error(`Unknown mode "${mode}": use ${Object.keys(MODES).join(", ")}`);
await run();
