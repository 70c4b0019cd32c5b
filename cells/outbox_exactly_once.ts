import { ok } from "node:assert/strict";
import { mkdir } from "node:fs/promises";
import { readAckJournal } from "../harness/ack_journal.ts";
import { countReady, releaseBarrier } from "../harness/barrier.ts";
import { type Child, classifyExit, killWhileAlive, reapAll } from "../harness/child.ts";
import { waitFor } from "../harness/wait_for.ts";
import { exists } from "../internal/fs.ts";
import { type CellRun, defineCell } from "./_cell.ts";
import type { CellOptions } from "./cell_options.ts";
import { untilExited } from "./_kill.ts";
import { seriesKind } from "./_kill_series.ts";
import { sweepAtomicity } from "./_sweep_atomicity.ts";
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
import { CELL_METHODS, loadTarget, openTargetStore } from "./target.ts";

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
  /**
   * Which transports each kill point runs with: `both` (the default, which the matrix and
   * `deno task mutants` use), or `one`: half the scenarios, for a quick run (the project's
   * own `deno test`): the non-idempotent transport, where a double delivery or a lost
   * booking shows, except in a crash during a resend, which runs the idempotent one so
   * that a resend happens.
   */
  transports?: "both" | "one";
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
  /** What the armed recoverer's acknowledged sweep left that is not on disk. */
  takeoverLost: string[];
  racers: Child[];
  restarted: Child;
  /** Whether the restarted sender was killed alive, waiting after its last mark. */
  restartedKilled: boolean;
  arrivals: Arrival[];
}

/** The obligations the restarted sender records and delivers itself (`children/restarted_sender.ts`). */
const LIVE = ["live effect 0", "live effect 1"];

/**
 * What the armed recoverer's sweep acknowledged (its journal) that the file no longer
 * holds once it died: each obligation it took over and did not touch again (to resend, or
 * settled unknown) must keep the state and fence the sweep returned.
 */
async function lostTakeovers(target: string, db: string, journal: string): Promise<string[]> {
  const acked = readAckJournal<{ id: string; action: string; state: string; fence: number }>(
    journal,
  ).filter((a) => a.action !== "send");
  if (!acked.length) return [];
  const store = await openTargetStore(target, db);
  try {
    const stored = new Map((await store.listObligations!()).map((o) => [o.obligationId, o]));
    return acked.flatMap((a) => {
      const o = stored.get(a.id);
      return o?.state === a.state && o.deliveryFence === a.fence ? [] : [
        `the sweep returned ${a.id} taken over (${a.action}: ${a.state}, fence ${a.fence}) and its process died after that acknowledgement; the file holds ${
          o ? `${o.state}, fence ${o.deliveryFence}` : "no such obligation"
        }`,
      ];
    });
  } finally {
    await store.close();
  }
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
  const journal = `${dir}/sender-acks.jsonl`;
  const flag = idempotent ? "1" : "0";
  // The third obligation is the one in flight: two were delivered before it.
  const senderPoint = point === RECOVERER_AFTER_SEND ? SENDER_AFTER_SEND : point;
  const sender = ctx.spawn("sender.ts", [db, inbox, String(options.obligations), journal], {
    env: { SESSION_DB_CRASH_AT: `${senderPoint}@3` },
  });
  await untilExited(sender, `the sender to reach crash point ${senderPoint}`);
  const mode = idempotent ? "idempotent" : "plain";
  // Every kill point of cell 5 lies between transactions (after a COMMIT or a send).
  if (classifyExit(sender.exited!).kind === "killed") {
    ctx.observeLeg(db, `${senderPoint} (${mode})`, true);
  }
  let armed: Child | undefined;
  let takeoverLost: string[] = [];
  if (point === RECOVERER_AFTER_SEND) {
    const armedJournal = `${dir}/armed-acks.jsonl`;
    armed = ctx.spawn("recoverer.ts", [db, inbox, dir, "armed", "-", flag, armedJournal], {
      env: { SESSION_DB_CRASH_AT: RECOVERER_AFTER_SEND },
    });
    await untilExited(armed, `the armed recoverer to reach ${RECOVERER_AFTER_SEND}`);
    if (classifyExit(armed.exited!).kind === "killed") {
      // Not quiescent: a store that acknowledges its sweep before COMMIT dies inside it.
      ctx.observeLeg(db, `${RECOVERER_AFTER_SEND} (${mode})`);
      takeoverLost = await lostTakeovers(ctx.target, db, armedJournal);
    }
  }
  // The application restarts while the recoverers race (it stays alive throughout); in a
  // crash during a resend it books the dead sender's send, which a recovery took over.
  const recorded = senderAtKill(point, options.obligations).recorded;
  const restarted = ctx.spawn("restarted_sender.ts", [
    db,
    inbox,
    dir,
    String(recorded),
    journal,
    point === RECOVERER_AFTER_SEND ? "1" : "0",
    flag,
  ]);
  let restartedKilled = false;
  const barrier = `${dir}/go`;
  const racers: Child[] = [];
  try {
    for (let i = 0; i < options.recoverers; i++) {
      racers.push(ctx.spawn("recoverer.ts", [db, inbox, dir, `r${i}`, barrier, flag]));
    }
    const ready = () => countReady(dir) >= options.recoverers && exists(`${dir}/restarted-ready`);
    await waitFor(ready, {
      what: `${options.recoverers} recoverers and the restarted sender ready`,
      deadlineMs: 30_000,
      children: [...racers, restarted],
      observed: () => `${countReady(dir)} recoverers ready`,
    });
    releaseBarrier(barrier);
    await waitFor(() => racers.every((r) => r.exited !== undefined), {
      what: "the racing recoverers to finish",
      deadlineMs: 30_000,
      observed: () => `${racers.filter((r) => r.exited).length} finished`,
    });
    releaseBarrier(`${dir}/go-late`);
    const acked = `${dir}/restarted-acked`;
    await waitFor(() => exists(acked) || restarted.exited !== undefined, {
      what: "the restarted sender to acknowledge its last delivery",
      deadlineMs: 30_000,
    });
    if (restarted.exited === undefined) {
      await killWhileAlive(restarted);
      restartedKilled = true;
      // Not quiescent: a store that acknowledges before COMMIT dies inside a transaction.
      ctx.observeLeg(db, `restarted sender after its last mark (${mode})`);
    }
  } finally {
    await reapAll([...racers, restarted]);
  }
  return {
    kind,
    point,
    idempotent,
    db,
    sender,
    ...(armed ? { armed } : {}),
    takeoverLost,
    racers,
    restarted,
    restartedKilled,
    arrivals: readInbox(inbox),
  };
}

/** Obligations two racing recoverers both took (each prints the ids it handled). */
function overlapping(racers: Child[]): string[] {
  const takers = new Map<string, string[]>();
  for (const racer of racers) {
    const line = racer.stdout.trim().split("\n").pop() ?? "";
    if (!line.startsWith("{")) continue;
    const { name, done } = JSON.parse(line) as { name: string; done: string[] };
    for (const entry of done) {
      const id = entry.slice(0, entry.indexOf(":"));
      takers.set(id, [...takers.get(id) ?? [], `${name}: ${entry.slice(id.length + 1)}`]);
    }
  }
  return [...takers].filter(([, by]) => by.length > 1).map(([id, by]) =>
    `${id} taken by ${by.length} concurrent sweeps (${
      by.join("; ")
    }): they must return disjoint sets`
  );
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
    live: LIVE,
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
      .length + (s.restartedKilled ? 1 : 0),
  );
  tally(
    ctx,
    "acknowledgedOps",
    sender.acknowledgedRecorded + sender.acknowledgedDelivered + 2 * LIVE.length,
  );
  tally(ctx, "lost", judged.lost + s.takeoverLost.length);

  await t.step(`${label}: killed at the point by SIGKILL, recoverers exited 0`, () => {
    ok(classifyExit(s.sender.exited!).kind === "killed", `sender: ${s.sender.describe()}`);
    if (s.armed) {
      ok(classifyExit(s.armed.exited!).kind === "killed", `armed recoverer: ${s.armed.describe()}`);
    }
    const bad = s.racers.filter((r) => classifyExit(r.exited!).kind !== "won");
    ok(bad.length === 0, `recoverer(s) failed:\n${bad.map((r) => r.describe()).join("\n")}`);
  });
  await t.step(
    `${label}: the restarted sender was refused every settled obligation and kept its own`,
    () => {
      ok(
        s.restartedKilled,
        `the restarted sender did not reach its last acknowledged mark alive: ${s.restarted.describe()}`,
      );
    },
  );
  await checkSteps(t, [
    {
      name: "concurrent sweeps took disjoint sets",
      violations: overlapping(s.racers),
      missing: [],
    },
    {
      name: "an acknowledged sweep is durable",
      violations: s.takeoverLost,
      missing: [],
    },
    ...judged.checks,
  ], `${label}: `);
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
 * redeliver. Each kill point runs with both transports (one with `transports: "one"`): non-idempotent (every arrival is
 * an effect: at most once each) and idempotent (deduplicated by key: exactly once each,
 * every obligation delivered). No obligation is silently lost: each ends delivered (and
 * received) or marked unknown/failed with a reason; an obligation never attempted
 * before the crash (a pending orphan) must end delivered. Outbox states valid, recovery
 * deterministic, invariants hold. Every leg. The store's own kill points run when the
 * target lists them in `crashPoints()`; otherwise the sender dies right after the call
 * returned (`sender:afterRecord`, `sender:afterAttempting`), which leaves the same state.
 *
 * The guards, with obligations in several states at once: while the recoverers race, the
 * restarted sender (the application back after the crash, alive throughout) holds one
 * obligation pending and one attempting of its own; it re-records the dead sender's and
 * tries to attempt each that is no longer pending (refused: only a pending one moves);
 * in a crash during a resend it books the dead sender's send with its old fence from the
 * sender's journal (refused: the recovery superseded or settled that attempt). Afterwards
 * a sweep finds nothing left to take, its own two are intact (no sweep took a live
 * process's obligation, no mark touched another obligation) and it delivers them, then
 * waits to be SIGKILLed right after its last acknowledged mark: that delivery must be on
 * disk. The racers' sweeps return disjoint sets; the armed recoverer's acknowledged sweep
 * is on disk after it died. Sweep atomicity: a recoverer killed inside its sweep (at the
 * target's `sweepRecoverable:afterClaim`, else before each of the sweep's file-system
 * calls in turn) leaves two attempting orphans both taken or neither.
 *
 * @param options Target, leg, obligation and recoverer counts, transports.
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
  if (options.transports !== undefined && !["both", "one"].includes(options.transports)) {
    throw new TypeError(
      `Invalid transports "${options.transports}": use "both" (the default) or "one"`,
    );
  }
  return defineCell({
    id: 5,
    title: "delivery outbox exactly-once",
    legs: "all",
    requires: CELL_METHODS[5],
    // The sweep's kill series runs through the LD_PRELOAD recorder.
    preloads: true,
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
        const transports = options.transports === "one"
          ? [point === RECOVERER_AFTER_SEND]
          : [false, true];
        const scenarios = await Promise.all(
          transports.map((idempotent) =>
            runScenario(ctx, kind, point, idempotent, { obligations, recoverers })
          ),
        );
        for (const s of scenarios) await checkScenario(ctx, t, s, obligations);
      }
      await sweepAtomicity(ctx, t, listed, seriesKind(options.killSeries), obligations);
      ctx.note("elapsedMs", Math.round(performance.now() - started));
    },
  }, options);
}
