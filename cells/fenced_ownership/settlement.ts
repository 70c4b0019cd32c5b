// Cell 7's settlement guards, the parent side: runs `children/settle_guards.ts` for the handoff
// and outbox owners the store has, SIGKILLs it right after its last acknowledged settling
// call, and judges what it journaled and what a fresh process reads back.
import { ok } from "node:assert/strict";
import { readAckJournal } from "../../harness/ack_journal.ts";
import type { CellRun } from "../engine/cell.ts";
import { killAfterLastWriteThenRead, killReadyAndObserve } from "../moves/kill.ts";
import { handoffStates } from "../contract/with_store.ts";
import { readObligation } from "../outbox_exactly_once/state.ts";
import { tally } from "../engine/tally.ts";
import { openTargetStore } from "../contract/target.ts";
import { SETTLE_GUARDS } from "./_children.ts";

/**
 * Resume after recovery: on the file the killed guards left, a fresh process parks the
 * failed handoff D again and claims it, and is SIGKILLed right after the claim; D must be
 * running and the others settled as the first life left them.
 */
async function resumeHandoffs(
  cell: { ctx: CellRun; t: Deno.TestContext },
  label: string,
  db: string,
): Promise<void> {
  const { ctx, t } = cell;
  const { answers, read: states = {}, failed } = await killAfterLastWriteThenRead(ctx, db, {
    writes: [
      { method: "requestHandoff", session: "D" },
      { method: "claimHandoff", session: "D" },
    ],
    read: (store) => handoffStates(store, ["A", "B", "C", "D"]),
  });
  await t.step(`${label}, resumed: the failed handoff is parked and claimed again`, () => {
    if (failed !== undefined) throw failed;
    ok(
      answers[0] === true && answers[1] === true,
      `requestHandoff and claimHandoff of the failed D on the recovered file answered ${
        JSON.stringify(answers)
      }`,
    );
    const want = { A: "completed", B: "failed", C: "pending", D: "running" };
    ok(
      JSON.stringify(states) === JSON.stringify(want),
      `after the resumed claim the handoffs are ${JSON.stringify(states)}, not ${
        JSON.stringify(want)
      }`,
    );
  });
}

/** The owners whose settling calls the guards exercise. */
export type SettledOwner = "handoffClaim" | "outboxAttempt";

interface GuardJournal {
  wrong?: string[];
  last?: string;
  session?: string;
  obligationId?: string;
  answer?: unknown;
}

/**
 * Runs the guards of `owner` and registers their two checks as steps.
 *
 * @param ctx The cell's run.
 * @param t The test context.
 * @param owner The owner.
 */
export async function settlementGuards(
  ctx: CellRun,
  t: Deno.TestContext,
  owner: SettledOwner,
): Promise<void> {
  const kind = owner === "handoffClaim" ? "handoff" : "outbox";
  const db = ctx.run.store(`guards-${kind}`);
  const journal = ctx.run.file(`guards-${kind}.jsonl`);
  const ready = ctx.run.file(`guards-${kind}.ready`);
  const child = ctx.spawn(SETTLE_GUARDS, [db, journal, ready, kind]);
  await killReadyAndObserve(ctx, child, {
    ready,
    what: `the ${kind} guards' last settling call acknowledged`,
    db,
    at: `killed after the ${kind} guards' last settling call`,
  });
  const entries = readAckJournal<GuardJournal>(journal);
  const wrong = entries.find((e) => e.wrong)?.wrong ?? [];
  const last = entries.find((e) => e.last);
  tally(ctx, "acknowledgedOps", 1);
  const store = await openTargetStore(ctx.target, db);
  let found: string | null | undefined;
  try {
    if (kind === "handoff") found = await store.getHandoffState!(last?.session ?? "D");
    else found = (await readObligation(store, last?.obligationId ?? ""))?.state;
  } finally {
    await store.close();
  }
  const label = `${owner} · settlement guards`;
  await t.step(
    `${label}: each settling call changes only what it names, from a state it may leave, under its fence`,
    () => ok(wrong.length === 0, wrong.join("; ")),
  );
  const want = kind === "handoff" ? "failed" : "unknown";
  if (kind === "handoff") await resumeHandoffs({ ctx, t }, label, db);
  await t.step(`${label}: the last settling call is durable the instant it returned`, () => {
    ok(last?.answer === true, `the last ${last?.last ?? "settling call"} answered ${last?.answer}`);
    ok(
      found === want,
      `${last?.last}(${
        last?.session ?? last?.obligationId
      }) returned true and the process was killed with nothing after it; a fresh process reads ${found}, not ${want}`,
    );
  });
}
