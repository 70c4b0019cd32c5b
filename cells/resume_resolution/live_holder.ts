// Cell 8's orphan with a live lock holder: a child takes the compression lock of a session
// and ends it for compression without a continuation (a rotator that would die next), and
// waits, beside a whole rotation. While it lives, reopenOrphanedCompressionSession must
// refuse the orphan and change nothing; once it is SIGKILLed, a process reopens the orphan
// at once and is killed right after (the reopen durable, nothing else changed), the orphan
// resolves to itself and takes an append, and its lock is free to another holder at once.
import { reapAll } from "../../harness/child.ts";
import { waitFor } from "../../harness/wait_for.ts";
import { exists } from "../../internal/fs.ts";
import type { CellRun } from "../engine/cell.ts";
import { checkSteps, type StateCheck } from "../engine/state_check.ts";
import { tally } from "../engine/tally.ts";
import type { Store } from "../contract/target.ts";
import { type Answer, answerOf, describeAnswer, verdict } from "../contract/typed.ts";
import { killLanding, killReadyAndObserve } from "../moves/kill.ts";
import { LOCK_TTL_MS } from "../rotation_atomicity/children/lock_taker.ts";
import { ORPHAN_HOLDER, REOPENER } from "./_children.ts";
import { reopenViolations } from "./judge.ts";
import { type ChainState, readState, takeLock } from "./state.ts";
import { withStore } from "../contract/with_store.ts";
import { readReport } from "../../internal/report_line.ts";

const SESSION = "legacy";
const ROTATED = "rotated";

/** The orphan-to-be and, beside it, a whole rotation the reopen must leave alone. */
async function setUp(store: Store): Promise<void> {
  const holder = `cell8-setup:pid=${Deno.pid}`;
  for (const id of [SESSION, ROTATED]) {
    await store.createSession(id);
    await store.appendMessage(id, { role: "user", content: `${id} turn` });
  }
  if (!await store.tryAcquireCompressionLock!(ROTATED, holder, LOCK_TTL_MS)) {
    throw new Error(`live holder: could not take the free compression lock of ${ROTATED}`);
  }
  await store.publishCompressionChild!({
    parentId: ROTATED,
    childId: `${ROTATED}-child`,
    holder,
    messages: [{ role: "system", content: `summary of ${ROTATED}` }],
  });
  await store.releaseCompressionLock!(ROTATED, holder);
}

/** After the holder's death: reopened by a process killed right after, then used. */
async function afterDeath(ctx: CellRun, db: string) {
  const ready = ctx.run.file("live-holder.reopener.ready");
  const reopener = ctx.spawn(REOPENER, [db, SESSION, ready]);
  await killReadyAndObserve(ctx, reopener, {
    ready,
    what: "a fresh process to reopen the orphan",
    db,
    at: "the reopener, killed after its reopen",
  });
  const reopened = readReport<Answer>(reopener.stdout) ?? ({} as Answer);
  const state = await readState(ctx.target, db);
  return await withStore(ctx.target, db, async (store) => {
    const resolved = await answerOf(() => store.resolveResumeSessionId!(SESSION));
    const appended = await answerOf(() =>
      store.appendMessage(SESSION, { role: "user", content: "after its holder died" })
    );
    const messages = (await store.getMessages(SESSION)).map((m) => m.id);
    return { reopened, state, resolved, appended, messages };
  });
}

/** The violations once the holder is dead. */
function deathViolations(seen: Awaited<ReturnType<typeof afterDeath>>, before: ChainState) {
  const { reopened, state, resolved, appended, messages } = seen;
  return [
    ...reopenViolations([{ id: SESSION, orphan: true, answer: reopened }], before, state),
    ...(resolved.value === SESSION
      ? []
      : [`resolveResumeSessionId ${describeAnswer(resolved)}, expected ${SESSION}`]),
    ...(typeof appended.value === "number" && messages.includes(appended.value) ? [] : [
      `the append to the reopened ${SESSION} ${describeAnswer(appended)}, read back ${messages}`,
    ]),
  ];
}

/** The orphan while its holder lives: the reopen refused, nothing changed. */
function aliveCheck(
  alive: { answer: Answer; before: ChainState; after: ChainState },
  pid: number,
): StateCheck {
  return {
    name: "reopenOrphanedCompressionSession refuses an orphan whose lock holder lives",
    violations: [
      ...(verdict(alive.answer) === "refused"
        ? []
        : [`it ${describeAnswer(alive.answer)} while the holder (pid ${pid}) was alive`]),
      ...(JSON.stringify(alive.before) === JSON.stringify(alive.after)
        ? []
        : [`the refused call changed the store: ${JSON.stringify(alive.after.sessions)}`]),
    ],
    missing: [],
  };
}

/**
 * The orphan whose lock holder lives, then dies. Left out, and named, when the store has
 * no `endSession` (nothing else makes an orphan on a store that rotates atomically) or no
 * `reopenOrphanedCompressionSession`.
 *
 * @param ctx The cell's run.
 * @param t The test context.
 * @returns Whether it ran (the store has both methods).
 */
export async function liveHolderOrphan(ctx: CellRun, t: Deno.TestContext): Promise<boolean> {
  const db = ctx.run.store("live-holder");
  const ready = ctx.run.file("live-holder.ready");
  const missing = await withStore(ctx.target, db, async (store) => {
    const lacks = (["endSession", "reopenOrphanedCompressionSession"] as const)
      .filter((m) => typeof store[m] !== "function");
    if (!lacks.length) await setUp(store);
    return lacks;
  });
  if (missing.length) {
    ctx.note("liveHolder", `left out: no ${missing.join(", ")}`);
    return false;
  }
  const holder = ctx.spawn(ORPHAN_HOLDER, [db, SESSION, ready]);
  let alive: { answer: Answer; before: ChainState; after: ChainState };
  try {
    await waitFor(() => exists(ready), {
      what: "the holder to end the session",
      children: [holder],
    });
    const before = await readState(ctx.target, db);
    const answer = await withStore(
      ctx.target,
      db,
      async (store) => await answerOf(() => store.reopenOrphanedCompressionSession!(SESSION)),
    );
    alive = { answer, before, after: await readState(ctx.target, db) };
    await killLanding(holder, "the orphan's lock holder");
    tally(ctx, "sigkills", 1);
  } finally {
    await reapAll([holder]);
  }
  ctx.observeLeg(db, "the orphan's lock holder, waiting with the lock");
  const seen = await afterDeath(ctx, db);
  const lock = await takeLock(ctx.target, db, SESSION);
  await checkSteps(t, [
    aliveCheck(alive, holder.pid),
    {
      name:
        "once its holder is killed the orphan is reopened at once and durably, nothing else changed; it resolves to itself and takes an append",
      violations: deathViolations(seen, alive.after),
      missing: [],
    },
    {
      name: "another holder takes the dead holder's lock at once",
      violations: lock.taken === true
        ? []
        : [`tryAcquireCompressionLock returned ${lock.taken} (${lock.tookMs} ms)`],
      missing: [],
    },
  ], "live holder: ");
  return true;
}
