// Cell 13, part 1: writes that would break the store's schema rules, made in a child
// process and judged from a fresh one: each refused with a typed error, nothing created,
// nothing changed, also when the child is SIGKILLed right after the refusal; then the
// recovered store takes appends that survive another kill.
import { ok } from "node:assert/strict";
import type { CellRun } from "../engine/cell.ts";
import { soundness } from "../engine/state_check.ts";
import { type Answered, callsInChild } from "./_calls.ts";
import { buildValidStore, type Built, readStoreState, type StoreState } from "./_store_state.ts";
import { refusalProblems, unchangedProblems } from "./judge.ts";
import { PROBED, type Refusal, refusalsWith, resumeOn, resumeStep } from "./_refusals.ts";

function refusalsOf(built: Built): Refusal[] {
  const all = Object.values(built.ids).flat();
  return refusalsWith({
    of: (session, i) => built.ids[session]![i],
    past: Math.max(...all) + 1,
    fork: built.has.forkSession,
  });
}

/** A store given refusals in a child: the store before, the answers, two reads after. */
interface Refused {
  db: string;
  refusals: Refusal[];
  before: StoreState;
  answers: Answered[];
  after: [StoreState, StoreState];
}

/** Builds a valid store, makes `pick`'s refusals in a child (killed or closing), reads twice. */
async function refuseIn(
  ctx: CellRun,
  scenario: { name: string; kill: boolean; pick: (all: Refusal[]) => Refusal[] },
): Promise<Refused> {
  const db = ctx.run.store(scenario.name);
  const refusals = scenario.pick(refusalsOf(await buildValidStore(ctx.target, db)));
  const before = await readStoreState(ctx.target, db, PROBED);
  const answers = await callsInChild(ctx, {
    db,
    name: scenario.name,
    kill: scenario.kill,
    calls: refusals.map((r) => r.call),
  });
  const first = await readStoreState(ctx.target, db, PROBED);
  const second = await readStoreState(ctx.target, db, PROBED);
  return { db, refusals, before, answers, after: [first, second] };
}

/** The refusals' steps: each refused typed, then nothing changed and the state sound. */
async function refusedSteps(t: Deno.TestContext, refused: Refused, prefix: string) {
  for (const refusal of refused.refusals) {
    const answer = refused.answers.find((a) => a.label === refusal.call.label)?.answer;
    await t.step(`${prefix}${refusal.call.label}: refused with a typed error`, () => {
      const problems = refusalProblems(refusal.kind, answer);
      ok(problems.length === 0, problems.join("; "));
    });
  }
  const [first, second] = refused.after;
  const created = refused.refusals.map((r) => r.creates);
  await t.step(`${prefix}nothing created, nothing changed, read by a fresh process`, () => {
    const problems = unchangedProblems(refused.before, first, created);
    ok(problems.length === 0, problems.join("; "));
  });
  await t.step(`${prefix}recovery deterministic, integrity, invariants`, () => {
    const problems = soundness(refused.db, [first, second], first.invariants ?? []);
    ok(problems.length === 0, problems.join("; "));
  });
}

/**
 * Part 1: on a valid store, a child makes every refused write and closes; then, for each
 * refused write, a child makes it alone and is SIGKILLed right after it, and a resumer
 * on that file appends to `s` and `t` and is killed right after. All at once (separate
 * files), judged in order.
 *
 * @param ctx The cell's run.
 * @param t The test context.
 * @returns Whether the store has `forkSession`.
 * @example
 * ```ts ignore
 * const { fork } = await refusedWrites(ctx, t);
 * ```
 */
export async function refusedWrites(
  ctx: CellRun,
  t: Deno.TestContext,
): Promise<{ fork: boolean }> {
  const built = await buildValidStore(ctx.target, ctx.run.store("methods"));
  const count = refusalsOf(built).length;
  const killed = async (i: number) => {
    const refused = await refuseIn(ctx, {
      name: `killed-${i}`,
      kill: true,
      pick: (all) => [all[i]!],
    });
    const recovered = { db: refused.db, before: refused.after[0] };
    return { refused, resumed: await resumeOn(ctx, recovered, `resumed-${i}`) };
  };
  const [closed, kills] = await Promise.all([
    refuseIn(ctx, { name: "refusals", kill: false, pick: (all) => all }),
    Promise.all(Array.from({ length: count }, (_, i) => killed(i))),
  ]);
  ctx.observeLeg(closed.db, "after the refusals", true);
  if (count === 1) ctx.note("leftOut", { forks: "the store lacks forkSession" });
  await refusedSteps(t, closed, "");
  for (const kill of kills) {
    const label = kill.refused.refusals[0]!.call.label;
    await refusedSteps(t, kill.refused, `killed right after ${label} · `);
    await resumeStep(t, `killed right after ${label} · resumed`, kill.resumed);
  }
  return { fork: built.has.forkSession };
}
