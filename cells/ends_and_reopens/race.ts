// Cell 10's races: N racers released together by a file barrier each make one call on one
// session. `ensureSession` (each then appends its name): every one returns without error,
// exactly one session exists, and it holds every racer's message once. `endSession` of an
// open session and `reopenSession` of an ended one: every racer returns, exactly one gets
// `true`, and the session is in the state the winner left (the winner's reason).
import { ok } from "node:assert/strict";
import { type Child, TIMED_OUT } from "../../harness/child.ts";
import { HarnessError } from "../../harness/harness_error.ts";
import type { CellRun } from "../engine/cell.ts";
import { tally } from "../engine/tally.ts";
import { releasedTogether } from "../moves/released_together.ts";
import { judgeRace, prepareRace, type RacedOp, racerName } from "./_race_state.ts";
import { ENSURER } from "./_children.ts";

/** One race: the racers, opened on the store and released together; returned once all exited. */
async function race(
  ctx: CellRun,
  plan: { db: string; op: RacedOp; round: number; racers: number },
): Promise<{ children: Child[]; session: string }> {
  const dir = ctx.run.file(`${plan.op}-race-${plan.round}`);
  await Deno.mkdir(dir);
  const barrier = `${dir}/go`;
  const session = plan.op === "ensure" ? `ensured-${plan.round}` : `${plan.op}-raced-${plan.round}`;
  await prepareRace(ctx.target, plan.db, { op: plan.op, session });
  const children = await releasedTogether(
    (i) => ctx.spawn(ENSURER, [plan.db, dir, racerName(i), barrier, session, plan.op]),
    { count: plan.racers, what: "racers", dir, barrier },
  );
  return { children, session };
}

/**
 * Races `op` on a new session of `db`, `rounds` times, in steps named `<prefix>round <n>: …`
 * (the prefix is `<op> race, ` for an end or a reopen).
 *
 * @param ctx The cell's run.
 * @param t The test context the steps are taken in.
 * @param plan The file, the call, how many racers, how many rounds.
 * @example
 * ```ts ignore
 * await races(ctx, t, { db: ctx.run.store("ensure"), op: "ensure", racers: 8, rounds: 3 });
 * ```
 */
export async function races(
  ctx: CellRun,
  t: Deno.TestContext,
  plan: { db: string; op: RacedOp; racers: number; rounds: number },
): Promise<void> {
  const prefix = plan.op === "ensure" ? "" : `${plan.op} race, `;
  for (let round = 1; round <= plan.rounds; round++) {
    const { children, session } = await race(ctx, { ...plan, round });
    const judged = await judgeRace(ctx.target, { ...plan, session, racers: children });
    const timedOut = children.filter((c) => !c.exited!.signal && c.exited!.code === TIMED_OUT);
    const gaveUp = judged.failed.length > 0 && judged.failed.length === timedOut.length;
    tally(ctx, "acknowledgedOps", children.length - judged.failed.length);
    tally(ctx, "lost", judged.lost);
    await t.step(`${prefix}round ${round}: every racer returned without error`, () => {
      const text = `${judged.failed.length} racer(s) failed:\n${judged.failed.join("\n")}`;
      if (gaveUp) throw new HarnessError(text);
      ok(judged.failed.length === 0, text);
    });
    const outcome = plan.op === "ensure"
      ? "exactly one session, holding every racer's message once"
      : `exactly one racer's ${plan.op}Session returned true, the session as it left it`;
    await t.step(`${prefix}round ${round}: ${outcome}`, () => {
      ok(judged.outcome.length === 0, judged.outcome.join("; "));
    });
    await t.step(
      `${prefix}round ${round}: recovery deterministic, integrity ok, invariants hold`,
      () => {
        ok(judged.soundness.length === 0, judged.soundness.join("; "));
      },
    );
  }
}
