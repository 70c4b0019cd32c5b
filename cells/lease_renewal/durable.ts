// Cell 11 (b): a renewal that returned is durable. A holder named without `pid=` (only the
// lease's expiry decides) renews a short lease to a long one and is SIGKILLed right after
// the acknowledgement; past the short lease another holder must still be refused, while the
// lock beside it, never renewed, lapses. Then a fresh process resumes as the holder.
import { ok } from "node:assert/strict";
import { readAckJournal } from "../../harness/ack_journal.ts";
import { HarnessError } from "../../harness/harness_error.ts";
import type { CellRun } from "../engine/cell.ts";
import { tally } from "../engine/tally.ts";
import { killReadyAndObserve } from "../moves/kill.ts";
import { type Answer, answerOf, describeAnswer, verdict } from "../contract/typed.ts";
import { openTargetStore } from "../contract/target.ts";
import { type DurableAck, durableProblems, liveRenewalProblem } from "./judge.ts";
import { awaitLapse, takeWitness } from "../moves/lease_witness.ts";
import { recovered } from "./_read_back.ts";
import { HOLDER } from "./_children.ts";

const SESSION = "renewed";
const BESIDE = `${SESSION}-beside`;
const WITNESS = `${SESSION}-witness`;
const OTHER = `cell11-other:pid=${Deno.pid}`;
const HOUR = 3_600_000;

/** Runs the holder in `mode` on `db`, SIGKILLs it once it is ready, returns its journal. */
async function holderKilled<T>(
  ctx: CellRun,
  run: { db: string; mode: string; leaseMs: number; what: string },
): Promise<T[]> {
  const prefix = ctx.run.file(`durable-${run.mode}`);
  const child = ctx.spawn(HOLDER, [run.db, run.mode, prefix, SESSION, String(run.leaseMs)]);
  await killReadyAndObserve(ctx, child, {
    ready: `${prefix}.ready`,
    what: run.what,
    db: run.db,
    at: `killed right after ${run.what}`,
  });
  return readAckJournal<T>(`${prefix}.jsonl`);
}

/**
 * Another holder's takeovers of the renewed lock and of the one beside it, from a fresh
 * process, once the short lease lapsed as the store sees it: a witness taken after the
 * holder was killed lapsed.
 */
async function takeovers(
  ctx: CellRun,
  db: string,
  leaseMs: number,
): Promise<{ renewed: Answer; beside: Answer }> {
  const store = await openTargetStore(ctx.target, db);
  try {
    const witness = await takeWitness(store, { session: WITNESS, ttlMs: leaseMs });
    await awaitLapse(store, witness, { what: "the short lease to lapse" });
    return {
      renewed: await answerOf(() => store.tryAcquireCompressionLock!(SESSION, OTHER, HOUR)),
      beside: await answerOf(() => store.tryAcquireCompressionLock!(BESIDE, OTHER, HOUR)),
    };
  } finally {
    await store.close();
  }
}

/**
 * Resume after recovery: a fresh process, as the renewed holder, publishes the rotation and
 * releases the lock, and is SIGKILLed right after; both must be acknowledged and durable.
 */
async function resumeAsHolder(ctx: CellRun, t: Deno.TestContext, db: string): Promise<void> {
  const acks = await holderKilled<{ published?: Answer; released?: Answer }>(ctx, {
    db,
    mode: "resume",
    leaseMs: 0,
    what: "the renewed holder's publish and release",
  });
  tally(ctx, "acknowledgedOps", 2);
  const { state, problems } = await recovered(ctx.target, db);
  await t.step("resumed: the renewed holder publishes and releases, durable across a kill", () => {
    const published = acks.find((a) => a.published)?.published;
    const released = acks.find((a) => a.released)?.released;
    for (const [what, answer] of [["publish", published], ["release", released]] as const) {
      ok(
        answer !== undefined && verdict(answer) === "accepted",
        `the renewed holder's ${what} on the recovered file ${
          answer ? describeAnswer(answer) : "never returned"
        }`,
      );
    }
    const parent = state.sessions.find((s) => s.id === SESSION);
    ok(parent?.endReason === "compression", `${SESSION} ended by ${parent?.endReason}`);
    const next = state.children[`${SESSION}-next`];
    ok(
      JSON.stringify(next) === JSON.stringify(["renewed summary"]),
      `the continuation holds ${JSON.stringify(next)}`,
    );
    ok(problems.length === 0, problems.join("; "));
  });
}

/**
 * Cell 11 (b): the durable renewal, its recovered state, and the resume.
 *
 * @param ctx The cell's run.
 * @param t The test context.
 * @param leaseMs The short lease renewed (and left to lapse beside it).
 * @example
 * ```ts ignore
 * import { durableRenewal } from "./durable.ts";
 * await durableRenewal(ctx, t, 1_000);
 * ```
 */
export async function durableRenewal(
  ctx: CellRun,
  t: Deno.TestContext,
  leaseMs: number,
): Promise<void> {
  const db = ctx.run.store("durable");
  const setup = await openTargetStore(ctx.target, db);
  try {
    for (const id of [SESSION, BESIDE]) await setup.createSession(id);
    await setup.appendMessage(SESSION, { role: "user", content: "work before the renewal" });
  } finally {
    await setup.close();
  }
  const [ack] = await holderKilled<DurableAck>(ctx, {
    db,
    mode: "durable",
    leaseMs,
    what: "the acknowledged renewal",
  });
  tally(ctx, "acknowledgedOps", 3);
  await t.step("the renewal of a live lease is acknowledged", () => {
    ok(ack !== undefined, "the holder journaled no renewal");
    const refused = liveRenewalProblem(ack, leaseMs);
    if (refused?.late) throw new HarnessError(`too slow to judge: ${refused.problem}`);
    ok(refused === undefined, refused?.problem);
  });
  if (verdict(ack!.answer) !== "accepted") return;
  const seen = await takeovers(ctx, db, leaseMs);
  const problems = durableProblems(seen.renewed, seen.beside);
  tally(ctx, "lost", verdict(seen.renewed) === "accepted" ? 1 : 0);
  await t.step("an acknowledged renewal survives a SIGKILL right after it", () => {
    ok(problems.length === 0, problems.join("; "));
  });
  const { problems: read } = await recovered(ctx.target, db);
  await t.step("killed after the renewal: recovery deterministic, integrity and invariants", () => {
    ok(read.length === 0, read.join("; "));
  });
  await resumeAsHolder(ctx, t, db);
}
