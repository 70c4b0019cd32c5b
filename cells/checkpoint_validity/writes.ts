// Cell 13, part 1: writes that would break the store's schema rules, made in a child
// process and judged from a fresh one: each refused with a typed error, nothing created,
// nothing changed, also when the child is SIGKILLed right after the refusal; then the
// recovered store takes appends that survive another kill.
import { ok } from "node:assert/strict";
import type { CellRun } from "../engine/cell.ts";
import { soundness } from "../engine/state_check.ts";
import { tally } from "../engine/tally.ts";
import { type Answered, type Call, callsInChild } from "./_calls.ts";
import { buildValidStore, type Built, readStoreState, type StoreState } from "./_store_state.ts";
import {
  type Appended,
  refusalProblems,
  type RefusedWrite,
  resumeProblems,
  unchangedProblems,
} from "./judge.ts";

/** A write the store must refuse, and the session it would create. */
interface Refusal {
  kind: RefusedWrite;
  call: Call;
  creates: string;
}

/** Every session a refused write names, read to see that none appeared. */
const PROBED = ["ghost", "nobody", "f-past-end", "f-foreign", "f-orphan"];

/**
 * The writes to refuse on a valid store: an append to a missing session, and, with
 * `forkSession`, forks of `s` past its end and at a message of `t` (inside `s`'s range of
 * ids), and of a missing parent.
 */
function refusalsOf(built: Built): Refusal[] {
  const { ids } = built;
  const append: Refusal = {
    kind: "append",
    creates: "ghost",
    call: {
      label: "appendMessage to the missing session ghost",
      method: "appendMessage",
      args: ["ghost", { role: "user", content: "to nobody" }],
    },
  };
  if (!built.has.forkSession) return [append];
  const all = Object.values(ids).flat();
  const fork = (label: string, args: unknown[]): Refusal => ({
    kind: "fork",
    creates: String(args[2]),
    call: { label, method: "forkSession", args },
  });
  return [
    append,
    fork("forkSession of s past its end", ["s", Math.max(...all) + 1, "f-past-end"]),
    fork("forkSession of s at a message of t", ["s", ids.t![0], "f-foreign"]),
    fork("forkSession of the missing session nobody", ["nobody", ids.s![0], "f-orphan"]),
  ];
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
  const db = ctx.run.file(`${scenario.name}.db`);
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

/** The resume: a child appends to `s` and `t` and is killed right after; read after. */
async function resumeOn(ctx: CellRun, refused: Refused, name: string) {
  const before = refused.after[0];
  const contents = [["s", "resumed s"], ["t", "resumed t"]] as const;
  const answers = await callsInChild(ctx, {
    db: refused.db,
    name,
    kill: true,
    calls: contents.map(([session, content]) => ({
      label: `appendMessage to ${session}`,
      method: "appendMessage",
      args: [session, { role: "user", content }],
    })),
  });
  const ok = answers.slice(1).filter((a) => a.answer && !a.answer.threw);
  tally(ctx, "acknowledgedOps", ok.length);
  const appended: Appended[] = contents.map(([session, content], i) => ({
    session,
    content,
    id: Number(answers[i + 1]?.answer?.value),
  }));
  const failed = answers.slice(1).filter((a) => !a.answer || a.answer.threw);
  const after = await readStoreState(ctx.target, refused.db, PROBED);
  return { before, after, appended, failed };
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
 * @example
 * ```ts ignore
 * await refusedWrites(ctx, t);
 * ```
 */
export async function refusedWrites(ctx: CellRun, t: Deno.TestContext): Promise<void> {
  const count = refusalsOf(await buildValidStore(ctx.target, ctx.run.file("methods.db"))).length;
  const killed = async (i: number) => {
    const refused = await refuseIn(ctx, {
      name: `killed-${i}`,
      kill: true,
      pick: (all) => [all[i]!],
    });
    return { refused, resumed: await resumeOn(ctx, refused, `resumed-${i}`) };
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
    await t.step(`killed right after ${label} · resumed: appends land and survive a kill`, () => {
      const { before, after, appended, failed } = kill.resumed;
      ok(failed.length === 0, `appends refused on the recovered store: ${JSON.stringify(failed)}`);
      const problems = resumeProblems(before, after, appended);
      ok(problems.length === 0, problems.join("; "));
    });
  }
}
