// Cell 10's ensure race: N racers released together by a file barrier each ensure one
// session and append their name to it; every one returns without error, exactly one
// session exists, and it holds every racer's message once.
import { ok } from "node:assert/strict";
import { countReady, releaseBarrier } from "../../harness/barrier.ts";
import { type Child, reapAll, TIMED_OUT } from "../../harness/child.ts";
import { HarnessError } from "../../harness/harness_error.ts";
import { waitFor } from "../../harness/wait_for.ts";
import type { CellRun } from "../engine/cell.ts";
import { soundness } from "../engine/state_check.ts";
import { tally } from "../engine/tally.ts";
import { openTargetStore } from "../contract/target.ts";
import { ENSURER } from "./_children.ts";

/** The racers, opened on the store and released together; returned once all exited. */
async function race(ctx: CellRun, plan: { db: string; round: number; racers: number }) {
  const dir = ctx.run.file(`ensure-${plan.round}`);
  await Deno.mkdir(dir);
  const barrier = `${dir}/go`;
  const session = `ensured-${plan.round}`;
  const children: Child[] = [];
  try {
    for (let i = 0; i < plan.racers; i++) {
      children.push(ctx.spawn(ENSURER, [plan.db, dir, `racer-${i}`, barrier, session]));
    }
    await waitFor(() => countReady(dir) >= plan.racers, {
      what: `${plan.racers} racers ready`,
      deadlineMs: 60_000,
      children,
      observed: () => `${countReady(dir)} ready`,
    });
    releaseBarrier(barrier);
    await Promise.all(children.map((child) => child.status));
  } finally {
    await reapAll(children);
  }
  return { children, session };
}

/** What a fresh process reads of the raced session: how many sessions so named, its rows. */
async function readRaced(ctx: CellRun, db: string, session: string) {
  const store = await openTargetStore(ctx.target, db);
  try {
    const named = store.listSessions
      ? (await store.listSessions()).filter((s) => s.id === session).length
      : store.getSession
      ? (await store.getSession(session) ? 1 : 0)
      : undefined;
    const rows = (await store.getMessages(session)).map((row) => row.content);
    const invariants = store.checkInvariants ? await store.checkInvariants() : [];
    return { named, rows, invariants };
  } finally {
    await store.close();
  }
}

/**
 * Runs the ensure race `rounds` times on `db`, each on a new session, in steps named
 * `round <n>: …`.
 *
 * @param ctx The cell's run.
 * @param t The test context the steps are taken in.
 * @param plan The file, how many racers, how many rounds.
 * @example
 * ```ts ignore
 * await ensureRaces(ctx, t, { db: ctx.run.file("ensure.db"), racers: 8, rounds: 3 });
 * ```
 */
export async function ensureRaces(
  ctx: CellRun,
  t: Deno.TestContext,
  plan: { db: string; racers: number; rounds: number },
): Promise<void> {
  for (let round = 1; round <= plan.rounds; round++) {
    const { children, session } = await race(ctx, { ...plan, round });
    const failed = children.filter((child) => child.exited!.code !== 0 || child.exited!.signal);
    const gaveUp = failed.length > 0 &&
      failed.every((child) => !child.exited!.signal && child.exited!.code === TIMED_OUT);
    tally(ctx, "acknowledgedOps", children.length - failed.length);
    await t.step(`round ${round}: every racer returned without error`, () => {
      const text = `${failed.length} racer(s) failed:\n${
        failed.map((c) => c.describe()).join("\n")
      }`;
      if (gaveUp) throw new HarnessError(text);
      ok(failed.length === 0, text);
    });
    const [first, second] = [
      await readRaced(ctx, plan.db, session),
      await readRaced(ctx, plan.db, session),
    ];
    const names = children.map((_, i) => `racer-${i}`);
    const missing = names.filter((name) => first.rows.filter((r) => r === name).length !== 1);
    tally(ctx, "lost", missing.length);
    await t.step(`round ${round}: exactly one session, holding every racer's message once`, () => {
      ok(first.named === undefined || first.named === 1, `${first.named} sessions "${session}"`);
      ok(
        missing.length === 0,
        `messages not there once: ${missing.join(", ")} (rows ${JSON.stringify(first.rows)})`,
      );
    });
    await t.step(`round ${round}: recovery deterministic, integrity ok, invariants hold`, () => {
      const problems = soundness(plan.db, [first, second], first.invariants);
      ok(problems.length === 0, problems.join("; "));
    });
  }
}
