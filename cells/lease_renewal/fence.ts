// Cell 11 (a): a holder frozen past its lease renews after it lapsed: with nobody taking
// over, after another holder took over for a long lease, and for a short one whose expiry a
// third holder's takeover is then judged against.
import { ok } from "node:assert/strict";
import { releaseBarrier } from "../../harness/barrier.ts";
import type { Child } from "../../harness/child.ts";
import { HarnessError } from "../../harness/harness_error.ts";
import { waitFor } from "../../harness/wait_for.ts";
import type { CellRun } from "../engine/cell.ts";
import { tally } from "../engine/tally.ts";
import { readReport } from "../moves/stop_at_lock.ts";
import { type Answer, answerOf, verdict } from "../contract/typed.ts";
import { diagnosed } from "../engine/diagnoses.ts";
import { openTargetStore, type Store } from "../contract/target.ts";
import {
  FENCE_MOVES,
  type FenceOrder,
  type Move,
  type MoveName,
  movesProblems,
  staleRenewalProblem,
} from "./judge.ts";
import {
  awaitLapse,
  type LeaseWitness,
  noteLeaseOverrun,
  stopPastLease,
  takeWitness,
} from "../moves/lease_witness.ts";
import { recovered } from "./_read_back.ts";
import { HOLDER } from "./_children.ts";

/** The session whose lock the holders contend for. */
const SESSION = "renewed";
/**
 * The new holder's lease in `lapsing`: long enough for the stale holder to be continued and
 * renew, and one read. The short one fits an unloaded machine; a run it leaves mistimed is
 * run again with the long one, which fits a loaded two-core machine running the
 * integration set.
 */
const NEW_LEASES_MS = [2_000, 8_000] as const;
const HOUR = 3_600_000;
const NEW = `cell11-new:pid=${Deno.pid}`;
const THIRD = `cell11-third:pid=${Deno.pid}`;
/** The sessions of the witnesses of the stale holder's lease and of the new holder's. */
const WITNESSES = { stale: `${SESSION}-witness-stale`, new: `${SESSION}-witness-new` } as const;

/** One scenario's run: its order, file and file prefix. */
interface Fence {
  ctx: CellRun;
  order: FenceOrder;
  db: string;
  prefix: string;
  leaseMs: number;
  /** The new holder's lease in `lapsing`. */
  newLeaseMs: number;
}

/** What a scenario saw. */
interface FenceOutcome {
  stalled: number;
  /** How long past its end the store kept the holder's lease (its witness's). */
  overrunMs?: number | undefined;
  stale: Answer;
  /** How long the holder's lease had lapsed, at least, when it was let renew (ms). */
  lapsedMs: number;
  moves: Move[];
  recovered: string[];
}

const file = (fence: Fence, name: string) => `${fence.prefix}.${name}`;
const beats = (fence: Fence) => readReport<number>(file(fence, "beat")) ?? 0;

/** Starts the stale holder and waits until it took the lock and waits for its turn. */
async function startHolder(fence: Fence): Promise<{ child: Child; at: number }> {
  const child = fence.ctx.spawn(HOLDER, [
    fence.db,
    "stale",
    fence.prefix,
    SESSION,
    String(fence.leaseMs),
  ]);
  await waitFor(() => beats(fence) > 0, {
    what: `${fence.order}: the holder to take the lock and wait for its turn`,
    deadlineMs: 30_000,
    children: [child],
  });
  return { child, at: readReport<{ at: number }>(file(fence, "acquired"))!.at };
}

/** Continues the holder and lets it renew; returns what it was answered. */
async function resumeHolder(fence: Fence, child: Child): Promise<Answer> {
  releaseBarrier(file(fence, "go"));
  child.signal("SIGCONT");
  await waitFor(() => child.exited !== undefined, {
    what: `${fence.order}: the resumed holder to renew and exit`,
    deadlineMs: 30_000,
  });
  ok((await child.status).code === 0, `the resumed holder crashed: ${child.describe()}`);
  return readReport<Answer>(file(fence, "result"))!;
}

/** A publish of `childId` under `holder`'s lock, answered `true` when it returned. */
const publish = (store: Store, holder: string, childId: string) => async () =>
  await store.publishCompressionChild!({
    parentId: SESSION,
    childId,
    holder,
    messages: [{ role: "system", content: `${childId} summary` }],
  }) !== undefined;

/** When the takeover was called, and the witness of the lease it took (`lapsing`). */
interface Takeover {
  before: number;
  witness?: LeaseWitness;
}

/** The moves after the stale renewal (`FENCE_MOVES`), each answered. */
async function movesAfter(fence: Fence, store: Store, since: Takeover): Promise<Move[]> {
  const moves: Move[] = [];
  const calls: Record<MoveName, () => unknown> = {
    newTakesOver: () => store.tryAcquireCompressionLock!(SESSION, NEW, HOUR),
    thirdAtOnce: () => store.tryAcquireCompressionLock!(SESSION, THIRD, HOUR),
    thirdAfterExpiry: () => store.tryAcquireCompressionLock!(SESSION, THIRD, HOUR),
    newPublishes: publish(store, NEW, "child-new"),
    newReleases: () => store.releaseCompressionLock!(SESSION, NEW),
    thirdPublishes: publish(store, THIRD, "child-third"),
  };
  const lease = fence.newLeaseMs;
  for (const name of FENCE_MOVES[fence.order]) {
    if (name === "thirdAfterExpiry") {
      await awaitLapse(store, since.witness!, {
        what: `${fence.order}: the new holder's lease to lapse`,
      });
    }
    const answer = await answerOf(calls[name]);
    // The store decided at some instant before the call returned; the lease it granted
    // ends no sooner than `lease` after the takeover was called.
    const took = Date.now() - since.before;
    const mistimed = fence.order === "lapsing" && name === "thirdAtOnce" && took >= lease - 100
      ? `it returned ${took} ms after the takeover, too close to the new holder's ${lease} ms lease`
      : undefined;
    moves.push({ name, answer, ...(mistimed ? { mistimed } : {}) });
  }
  return moves;
}

/** One scenario, from the setup to the second fresh read. */
async function runFence(fence: Fence): Promise<FenceOutcome> {
  const store = await openTargetStore(fence.ctx.target, fence.db);
  const moves: Move[] = [];
  let stalled = -1;
  let overrunMs: number | undefined;
  let lapsedMs = 0;
  let stale: Answer = { threw: true, name: "HarnessError", message: "the holder never renewed" };
  try {
    await store.createSession(SESSION);
    await store.appendMessage(SESSION, { role: "user", content: "work before the takeover" });
    const holder = await startHolder(fence);
    const witness = await takeWitness(store, { session: WITNESSES.stale, ttlMs: fence.leaseMs });
    ({ beats: stalled, overrunMs } = await stopPastLease(holder.child, {
      who: `${fence.order}: the holder`,
      acquiredAt: holder.at,
      leaseMs: fence.leaseMs,
      beats: () => beats(fence),
      lapse: { store, witness },
    }));
    const since: Takeover = { before: Date.now() };
    if (fence.order !== "expired") {
      const ttl = fence.order === "lapsing" ? fence.newLeaseMs : HOUR;
      moves.push({
        name: "newTakesOver",
        answer: await answerOf(() => store.tryAcquireCompressionLock!(SESSION, NEW, ttl)),
      });
      if (fence.order === "lapsing") {
        since.witness = await takeWitness(store, { session: WITNESSES.new, ttlMs: ttl });
      }
    }
    lapsedMs = Date.now() - (holder.at + fence.leaseMs);
    stale = await resumeHolder(fence, holder.child);
    moves.push(...await movesAfter(fence, store, since));
  } finally {
    await store.close();
  }
  const { problems } = await recovered(fence.ctx.target, fence.db);
  return { stalled, overrunMs, stale, lapsedMs, moves, recovered: problems };
}

/** A scenario's checks, as steps named after its order. */
async function checkFence(
  t: Deno.TestContext,
  order: FenceOrder,
  out: FenceOutcome,
): Promise<void> {
  await t.step(`${order}: the holder was frozen by SIGSTOP past its lease`, () => {
    ok(
      out.stalled >= 0 && out.stalled <= 1,
      `the holder made ${out.stalled} heartbeat(s) while it should have been stopped`,
    );
  });
  await t.step(`${order}: the stale refreshCompressionLock is refused`, () => {
    const problem = staleRenewalProblem(out.stale);
    const accepted = verdict(out.stale) === "accepted";
    diagnosed(accepted && "stale-renewal-accepted", () =>
      ok(
        problem === undefined,
        accepted
          ? `${problem} (its lease had lapsed ${out.lapsedMs} ms before, and another holder could take over a lease as long taken after it)`
          : problem,
      ));
  });
  await t.step(`${order}: the renewal changed nothing`, () => {
    const { problems, mistimed } = movesProblems(order, out.moves);
    // A mistimed move leaves the lock's state after it unknown: the moves after it are void.
    if (mistimed.length) throw new HarnessError(`moves too slow to judge: ${mistimed.join("; ")}`);
    ok(problems.length === 0, problems.join("; "));
  });
  await t.step(`${order}: recovery deterministic, integrity and invariants`, () => {
    ok(out.recovered.length === 0, out.recovered.join("; "));
  });
}

/**
 * Cell 11 (a): every order at once (independent files and holders), each judged.
 *
 * @param ctx The cell's run.
 * @param t The test context.
 * @param leaseMs The stale holder's lease.
 * @example
 * ```ts ignore
 * import { fencedRenewals } from "./fence.ts";
 * await fencedRenewals(ctx, t, 300);
 * ```
 */
export async function fencedRenewals(
  ctx: CellRun,
  t: Deno.TestContext,
  leaseMs: number,
): Promise<void> {
  const orders: FenceOrder[] = ["expired", "taken", "lapsing"];
  const fenceOf = (order: FenceOrder, newLeaseMs: number, name: string = order): Fence => ({
    ctx,
    order,
    db: ctx.run.store(`fence-${name}`),
    prefix: ctx.run.file(`fence-${name}`),
    leaseMs,
    newLeaseMs,
  });
  const fences = orders.map((order) => fenceOf(order, NEW_LEASES_MS[0]));
  const outcomes = await Promise.all(fences.map(runFence));
  const lapsing = orders.indexOf("lapsing");
  if (outcomes[lapsing]!.moves.some((move) => move.mistimed)) {
    const again = fenceOf("lapsing", NEW_LEASES_MS[1], "lapsing-long");
    outcomes[lapsing] = await runFence(again);
    ctx.note("lapsingLeaseMs", again.newLeaseMs);
  }
  noteLeaseOverrun(ctx, outcomes.map((outcome) => outcome.overrunMs));
  ctx.observeLeg(fences[0]!.db, "after the stale renewals", true);
  ctx.note(
    "staleRenewals",
    Object.fromEntries(orders.map((o, i) => [o, outcomes[i]!.stale])),
  );
  for (const [i, order] of orders.entries()) {
    tally(ctx, "acknowledgedOps", outcomes[i]!.moves.length);
    await checkFence(t, order, outcomes[i]!);
  }
}
