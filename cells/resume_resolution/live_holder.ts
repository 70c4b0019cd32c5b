// Cell 8's orphan with a live lock holder: a child takes the compression lock of a session
// and ends it for compression without a continuation (a rotator that would die next), and
// waits. While it lives, reopenOrphanedCompressionSession must refuse the orphan and change
// nothing; once it is SIGKILLed, the orphan is reopened at once, resolves to itself, takes
// an append, and its lock is free to another holder at once.
import { reapAll } from "../../harness/child.ts";
import { waitFor } from "../../harness/wait_for.ts";
import { exists } from "../../internal/fs.ts";
import type { CellRun } from "../engine/cell.ts";
import { checkSteps } from "../engine/state_check.ts";
import { tally } from "../engine/tally.ts";
import { type Answer, answerOf, describeAnswer, verdict } from "../contract/typed.ts";
import { killLanding } from "../moves/kill.ts";
import { ORPHAN_HOLDER } from "./_children.ts";
import { type ChainState, readState, takeLock, withStore } from "./state.ts";

const SESSION = "legacy";

/** After the holder's death: reopen, resolve, append, read back. */
function afterDeath(target: string, db: string) {
  return withStore(target, db, async (store) => {
    const reopened = await answerOf(() => store.reopenOrphanedCompressionSession!(SESSION));
    const resolved = await answerOf(() => store.resolveResumeSessionId!(SESSION));
    const appended = await answerOf(() =>
      store.appendMessage(SESSION, { role: "user", content: "after its holder died" })
    );
    const messages = (await store.getMessages(SESSION)).map((m) => m.id);
    return { reopened, resolved, appended, messages };
  });
}

/** The violations once the holder is dead. */
function deathViolations(seen: Awaited<ReturnType<typeof afterDeath>>): string[] {
  const { reopened, resolved, appended, messages } = seen;
  return [
    ...(reopened.value === true ? [] : [
      `reopenOrphanedCompressionSession ${describeAnswer(reopened)} once its holder was killed`,
    ]),
    ...(resolved.value === SESSION
      ? []
      : [`resolveResumeSessionId ${describeAnswer(resolved)}, expected ${SESSION}`]),
    ...(typeof appended.value === "number" && messages.includes(appended.value) ? [] : [
      `the append to the reopened ${SESSION} ${describeAnswer(appended)}, read back ${messages}`,
    ]),
  ];
}

/**
 * The orphan whose lock holder lives, then dies. Left out, and named, when the store has
 * no `endSession` (nothing else makes an orphan on a store that rotates atomically) or no
 * `reopenOrphanedCompressionSession`.
 *
 * @param ctx The cell's run.
 * @param t The test context.
 */
export async function liveHolderOrphan(ctx: CellRun, t: Deno.TestContext): Promise<void> {
  const db = ctx.run.file("live-holder.db");
  const ready = ctx.run.file("live-holder.ready");
  const missing = await withStore(ctx.target, db, async (store) => {
    const lacks = (["endSession", "reopenOrphanedCompressionSession"] as const)
      .filter((m) => typeof store[m] !== "function");
    if (lacks.length) return lacks;
    await store.createSession(SESSION);
    for (const turn of [0, 1]) {
      await store.appendMessage(SESSION, { role: "user", content: `turn ${turn}` });
    }
    return [];
  });
  if (missing.length) return void ctx.note("liveHolder", `left out: no ${missing.join(", ")}`);
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
  const seen = await afterDeath(ctx.target, db);
  const lock = await takeLock(ctx.target, db, SESSION);
  await checkSteps(t, [
    {
      name: "reopenOrphanedCompressionSession refuses an orphan whose lock holder lives",
      violations: [
        ...(verdict(alive.answer) === "refused"
          ? []
          : [`it ${describeAnswer(alive.answer)} while the holder (pid ${holder.pid}) was alive`]),
        ...(JSON.stringify(alive.before) === JSON.stringify(alive.after)
          ? []
          : [`the refused call changed the store: ${JSON.stringify(alive.after.sessions)}`]),
      ],
      missing: [],
    },
    {
      name:
        "once its holder is killed the orphan is reopened at once, resolves to itself and takes an append",
      violations: deathViolations(seen),
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
}
