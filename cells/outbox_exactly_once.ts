import { ok } from "node:assert/strict";
import { mkdir } from "node:fs/promises";
import { countReady, releaseBarrier } from "../harness/barrier.ts";
import { type Child, classifyExit, reapAll } from "../harness/child.ts";
import { waitFor } from "../harness/wait_for.ts";
import { type CellRun, defineCell } from "./_cell.ts";
import type { CellOptions } from "./cell_options.ts";
import { untilExited } from "./_kill.ts";
import { startTallies, tally } from "./_tally.ts";
import {
  type Arrival,
  readInbox,
  RECOVERER_AFTER_SEND,
  SENDER_AFTER_ATTEMPTING,
  SENDER_AFTER_RECORD,
  SENDER_AFTER_SEND,
} from "./_inbox.ts";
import { judgeOutbox, senderAtKill } from "./_outbox_state.ts";
import { checkSteps } from "./_state_check.ts";
import { CELL_METHODS, loadTarget } from "./target.ts";

export { type RecoveredOutbox, recoverOutbox } from "./_outbox_state.ts";

/**
 * Options of {@linkcode outboxExactlyOnceCell}.
 *
 * @example
 * ```ts
 * import { outboxExactlyOnceCell, type OutboxExactlyOnceOptions } from "./outbox_exactly_once.ts";
 * const options: OutboxExactlyOnceOptions = {
 *   target: new URL("./reference_target.ts", import.meta.url),
 *   obligations: 10,
 *   recoverers: 4,
 * };
 * for (const test of await outboxExactlyOnceCell(options)) Deno.test(test);
 * ```
 */
export interface OutboxExactlyOnceOptions extends CellOptions {
  /** Obligations the sender records (default 5). */
  obligations?: number;
  /** Recoverers racing after each kill (default 3). */
  recoverers?: number;
}

/**
 * The kill points, by what they leave behind. A store's own point (right after its
 * COMMIT, before it returns) is used when the target lists it; otherwise the sender's
 * point right after the call returned leaves the same state, so no scenario is dropped.
 */
const KILL_POINTS = [
  { kind: "recorded-unsent", point: "recordObligation:afterCommit", fallback: SENDER_AFTER_RECORD },
  {
    kind: "attempting-unsent",
    point: "markAttempting:afterCommit",
    fallback: SENDER_AFTER_ATTEMPTING,
  },
  { kind: "sent-unacked", point: SENDER_AFTER_SEND },
  { kind: "crash during resend", point: RECOVERER_AFTER_SEND },
] as const;

/** The points the cell's children own (they run on every target). */
const APP_POINTS = new Set<string>([SENDER_AFTER_SEND, RECOVERER_AFTER_SEND]);

interface Scenario {
  kind: string;
  point: string;
  idempotent: boolean;
  db: string;
  sender: Child;
  armed?: Child;
  racers: Child[];
  arrivals: Arrival[];
}

async function runScenario(
  ctx: CellRun,
  kind: string,
  point: string,
  idempotent: boolean,
  options: { obligations: number; recoverers: number },
): Promise<Scenario> {
  const dir = ctx.run.file(`${point.replace(/\W/g, "_")}-${idempotent ? "idempotent" : "plain"}`);
  await mkdir(dir);
  const db = `${dir}/store.db`;
  const inbox = `${dir}/inbox.jsonl`;
  const flag = idempotent ? "1" : "0";
  // The third obligation is the one in flight: two were delivered before it.
  const senderPoint = point === RECOVERER_AFTER_SEND ? SENDER_AFTER_SEND : point;
  const sender = ctx.spawn("_sender.ts", [db, inbox, String(options.obligations)], {
    env: { SESSION_DB_CRASH_AT: `${senderPoint}@3` },
  });
  await untilExited(sender, `the sender to reach crash point ${senderPoint}`);
  const mode = idempotent ? "idempotent" : "plain";
  // Every kill point of cell 5 lies between transactions (after a COMMIT or a send).
  if (classifyExit(sender.exited!).kind === "killed") {
    ctx.observeLeg(db, `${senderPoint} (${mode})`, true);
  }
  let armed: Child | undefined;
  if (point === RECOVERER_AFTER_SEND) {
    armed = ctx.spawn("_recoverer.ts", [db, inbox, dir, "armed", "-", flag], {
      env: { SESSION_DB_CRASH_AT: RECOVERER_AFTER_SEND },
    });
    await untilExited(armed, `the armed recoverer to reach ${RECOVERER_AFTER_SEND}`);
    if (classifyExit(armed.exited!).kind === "killed") {
      ctx.observeLeg(db, `${RECOVERER_AFTER_SEND} (${mode})`, true);
    }
  }
  const barrier = `${dir}/go`;
  const racers: Child[] = [];
  try {
    for (let i = 0; i < options.recoverers; i++) {
      racers.push(ctx.spawn("_recoverer.ts", [db, inbox, dir, `r${i}`, barrier, flag]));
    }
    await waitFor(() => countReady(dir) >= options.recoverers, {
      what: `${options.recoverers} recoverers ready`,
      deadlineMs: 30_000,
      children: racers,
      observed: () => `${countReady(dir)} ready`,
    });
    releaseBarrier(barrier);
    await waitFor(() => racers.every((r) => r.exited !== undefined), {
      what: "the racing recoverers to finish",
      deadlineMs: 30_000,
      observed: () => `${racers.filter((r) => r.exited).length} finished`,
    });
  } finally {
    await reapAll(racers);
  }
  return {
    kind,
    point,
    idempotent,
    db,
    sender,
    ...(armed ? { armed } : {}),
    racers,
    arrivals: readInbox(inbox),
  };
}

async function checkScenario(
  ctx: CellRun,
  t: Deno.TestContext,
  s: Scenario,
  obligations: number,
): Promise<void> {
  const label = `${s.kind} (${s.point}) · ${s.idempotent ? "idempotent" : "non-idempotent"}`;
  const sender = senderAtKill(s.point, obligations);
  const judged = await judgeOutbox({
    target: ctx.target,
    db: s.db,
    arrivals: s.arrivals,
    idempotent: s.idempotent,
    sender,
    fewest: sender.recorded,
  });
  ctx.note(label, {
    arrivals: s.arrivals.length,
    states: judged.outbox.obligations.map((o) => o.state).join(" "),
  });
  tally(
    ctx,
    "sigkills",
    [s.sender, ...(s.armed ? [s.armed] : [])].filter((c) =>
      classifyExit(c.exited!).kind === "killed"
    )
      .length,
  );
  tally(ctx, "acknowledgedOps", sender.acknowledgedRecorded + sender.acknowledgedDelivered);
  tally(ctx, "lost", judged.lost);

  await t.step(`${label}: killed at the point by SIGKILL, recoverers exited 0`, () => {
    ok(classifyExit(s.sender.exited!).kind === "killed", `sender: ${s.sender.describe()}`);
    if (s.armed) {
      ok(classifyExit(s.armed.exited!).kind === "killed", `armed recoverer: ${s.armed.describe()}`);
    }
    const bad = s.racers.filter((r) => classifyExit(r.exited!).kind !== "won");
    ok(bad.length === 0, `recoverer(s) failed:\n${bad.map((r) => r.describe()).join("\n")}`);
  });
  await checkSteps(t, judged.checks, `${label}: `);
}

/**
 * Cell 5, delivery-outbox exactly-once: a crash between a send and its durable record
 * must not double-deliver on catch-up. A sender child records 5 obligations, then for
 * each marks it attempting, sends it to a durable inbox file (the fake transport, with
 * the obligation id as idempotency key, fsynced) and marks it delivered. It is killed
 * at the third obligation at each kill point: recorded-unsent
 * (`recordObligation:afterCommit`), attempting-unsent (`markAttempting:afterCommit`),
 * sent-unacked (`sender:afterSend`), and crash during a recovery's resend (the sender
 * killed sent-unacked, then a recoverer killed at `recoverer:afterSend`). Then 3
 * recoverer children, released together by a file barrier, race `sweepRecoverable` and
 * redeliver. Each kill point runs with both transports: non-idempotent (every arrival is
 * an effect: at most once each) and idempotent (deduplicated by key: exactly once each,
 * every obligation delivered). No obligation is silently lost: each ends delivered (and
 * received) or marked unknown/failed with a reason; an obligation never attempted
 * before the crash (a pending orphan) must end delivered. Outbox states valid, recovery
 * deterministic, invariants hold. Every leg. The store's own kill points run when the
 * target lists them in `crashPoints()`; otherwise the sender dies right after the call
 * returned (`sender:afterRecord`, `sender:afterAttempting`), which leaves the same state.
 *
 * @param options Target, leg, obligation and recoverer counts.
 * @returns The test definitions to register with `Deno.test`.
 * @example
 * ```ts
 * import { outboxExactlyOnceCell } from "./outbox_exactly_once.ts";
 * for (const test of await outboxExactlyOnceCell({ target: new URL("./reference_target.ts", import.meta.url) })) {
 *   Deno.test(test);
 * }
 * ```
 */
export function outboxExactlyOnceCell(
  options: OutboxExactlyOnceOptions,
): Promise<Deno.TestDefinition[]> {
  const obligations = options.obligations ?? 5;
  const recoverers = options.recoverers ?? 3;
  return defineCell({
    id: 5,
    title: "delivery outbox exactly-once",
    legs: "all",
    requires: CELL_METHODS[5],
    async run(ctx, t) {
      startTallies(ctx);
      const listed = new Set((await loadTarget(ctx.target)).crashPoints?.() ?? []);
      const points = KILL_POINTS.map((k) =>
        APP_POINTS.has(k.point) || listed.has(k.point) || !("fallback" in k)
          ? { kind: k.kind, point: k.point as string }
          : { kind: k.kind, point: k.fallback as string }
      );
      ctx.note("killPoints", points.map((k) => `${k.kind}: ${k.point}`));
      const started = performance.now();
      for (const { kind, point } of points) {
        // The plain and the idempotent scenario of a point share nothing (own folder,
        // database and inbox), so they run side by side and are checked in order.
        const scenarios = await Promise.all(
          [false, true].map((idempotent) =>
            runScenario(ctx, kind, point, idempotent, { obligations, recoverers })
          ),
        );
        for (const s of scenarios) await checkScenario(ctx, t, s, obligations);
      }
      ctx.note("elapsedMs", Math.round(performance.now() - started));
    },
  }, options);
}
