import { deepStrictEqual, ok } from "node:assert/strict";
import { mkdir } from "node:fs/promises";
import { countReady, releaseBarrier } from "../harness/barrier.ts";
import { type Child, classifyExit, reapAll } from "../harness/child.ts";
import { integrityIfSqlite } from "../harness/db_audit.ts";
import { waitFor } from "../harness/wait_for.ts";
import { type CellRun, defineCell } from "./_cell.ts";
import type { CellOptions } from "./cell_options.ts";
import { startTallies, tally } from "./_tally.ts";
import {
  type Arrival,
  effectsPerObligation,
  readInbox,
  RECOVERER_AFTER_SEND,
  SENDER_AFTER_ATTEMPTING,
  SENDER_AFTER_RECORD,
  SENDER_AFTER_SEND,
} from "./_inbox.ts";
import { CELL_METHODS, loadTarget, openTargetStore, type StoredObligation } from "./target.ts";

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

/** The index of the obligation in flight when the sender died (the third). */
const IN_FLIGHT = 2;

const STATES = ["pending", "attempting", "delivered", "failed", "unknown"];

/**
 * What a store's outbox holds after a crash: every obligation, sorted by content, and
 * the store's invariant violations. Opens the store through the target and closes it.
 *
 * @example
 * ```ts
 * import { recoverOutbox } from "./outbox_exactly_once.ts";
 * const target = new URL("./reference_target.ts", import.meta.url).href;
 * const path = `${Deno.makeTempDirSync()}/s.db`; // the file a killed sender left
 * const { obligations, invariants } = await recoverOutbox(target, path);
 * console.log(obligations.length, invariants); // 0 []
 * ```
 */
export async function recoverOutbox(target: string, db: string): Promise<RecoveredOutbox> {
  const store = await openTargetStore(target, db);
  try {
    const obligations = (await store.listObligations!()).map((o) => ({
      obligationId: o.obligationId,
      content: o.content,
      state: o.state,
      lastError: o.lastError ?? null,
    })).sort((a, b) => a.content.localeCompare(b.content));
    const invariants = store.checkInvariants ? await store.checkInvariants() : [];
    return { obligations, invariants };
  } finally {
    await store.close();
  }
}

/**
 * The outbox of a store after a crash, as {@linkcode recoverOutbox} reads it.
 *
 * @example
 * ```ts
 * import type { RecoveredOutbox } from "./outbox_exactly_once.ts";
 * const empty: RecoveredOutbox = { obligations: [], invariants: [] };
 * console.log(empty.obligations.length); // 0
 * ```
 */
export interface RecoveredOutbox {
  /** Every obligation, sorted by content. */
  obligations: (Pick<StoredObligation, "obligationId" | "content" | "state"> & {
    lastError: string | null;
  })[];
  /** The store's invariant violations (empty when it has no `checkInvariants`). */
  invariants: string[];
}

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

/** Until the child has exited on its own (a crash point kills it), deadline-bounded. */
async function exited(child: Child, what: string): Promise<void> {
  try {
    await waitFor(() => child.exited !== undefined, { what, deadlineMs: 30_000 });
  } finally {
    await reapAll([child]);
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
  const flag = idempotent ? "1" : "0";
  // The third obligation is the one in flight: two were delivered before it.
  const senderPoint = point === RECOVERER_AFTER_SEND ? SENDER_AFTER_SEND : point;
  const sender = ctx.spawn("_sender.ts", [db, inbox, String(options.obligations)], {
    env: { SESSION_DB_CRASH_AT: `${senderPoint}@3` },
  });
  await exited(sender, `the sender to reach crash point ${senderPoint}`);
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
    await exited(armed, `the armed recoverer to reach ${RECOVERER_AFTER_SEND}`);
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

/**
 * What the sender had acknowledged when it died at its third obligation: every
 * recording (all but the one in flight at `recordObligation:afterCommit`) and, past the
 * recordings, the two deliveries before the third.
 */
function acknowledgedOps(kind: string, expected: number): number {
  return kind === "recorded-unsent" ? expected - 1 : expected + 2;
}

/**
 * Acknowledged work missing after recovery: acknowledged recordings absent, the two
 * acknowledged deliveries not delivered, and obligations silently dropped (neither
 * delivered and received nor marked with a reason).
 */
function lostObligations(
  s: Scenario,
  recovered: RecoveredOutbox,
  effects: Map<string, number>,
  expected: number,
): number {
  const byContent = new Map(recovered.obligations.map((o) => [o.content, o]));
  const recorded = s.kind === "recorded-unsent" ? expected - 1 : expected;
  const delivered = s.kind === "recorded-unsent" ? 0 : 2;
  let lost = 0;
  for (let i = 0; i < recorded; i++) if (!byContent.has(`effect ${i}`)) lost++;
  for (let i = 0; i < delivered; i++) {
    if (byContent.get(`effect ${i}`)?.state !== "delivered") lost++;
  }
  const never = neverAttempted(s.kind, expected);
  for (const o of recovered.obligations) {
    const received = (effects.get(o.obligationId) ?? 0) >= 1;
    const fine = o.state === "delivered"
      ? received
      : !never.has(o.content) && (o.state === "unknown" || o.state === "failed") &&
        !!o.lastError?.trim();
    if (!fine) lost++;
  }
  return lost;
}

/**
 * The obligations no process had attempted before recovery (pending orphans): the
 * recordings of a sender killed recorded-unsent, otherwise the ones after the one in
 * flight. Nothing can have been sent for them, so recovery must deliver each. In a crash
 * during a resend the killed recoverer may have taken them all: none is sure to be pending.
 */
function neverAttempted(kind: string, expected: number): Set<string> {
  if (kind === "crash during resend") return new Set();
  const first = kind === "recorded-unsent" ? 0 : IN_FLIGHT + 1;
  const contents = new Set<string>();
  for (let i = first; i < expected; i++) contents.add(`effect ${i}`);
  return contents;
}

async function checkScenario(
  ctx: CellRun,
  t: Deno.TestContext,
  s: Scenario,
  expected: number,
): Promise<void> {
  const label = `${s.kind} (${s.point}) · ${s.idempotent ? "idempotent" : "non-idempotent"}`;
  const first = await recoverOutbox(ctx.target, s.db);
  const second = await recoverOutbox(ctx.target, s.db);
  const effects = effectsPerObligation(s.arrivals, s.idempotent);
  ctx.note(label, {
    arrivals: s.arrivals.length,
    states: first.obligations.map((o) => o.state).join(" "),
  });
  tally(
    ctx,
    "sigkills",
    [s.sender, ...(s.armed ? [s.armed] : [])].filter((c) =>
      classifyExit(c.exited!).kind === "killed"
    )
      .length,
  );
  tally(ctx, "acknowledgedOps", acknowledgedOps(s.kind, expected));
  tally(ctx, "lost", lostObligations(s, first, effects, expected));

  await t.step(`${label}: killed at the point by SIGKILL, recoverers exited 0`, () => {
    ok(classifyExit(s.sender.exited!).kind === "killed", `sender: ${s.sender.describe()}`);
    if (s.armed) {
      ok(classifyExit(s.armed.exited!).kind === "killed", `armed recoverer: ${s.armed.describe()}`);
    }
    const bad = s.racers.filter((r) => classifyExit(r.exited!).kind !== "won");
    ok(bad.length === 0, `recoverer(s) failed:\n${bad.map((r) => r.describe()).join("\n")}`);
  });
  if (s.idempotent) {
    await t.step(`${label}: each effect delivered exactly once`, () => {
      for (const o of first.obligations) {
        const n = effects.get(o.obligationId) ?? 0;
        ok(n === 1, `${o.content} (${o.obligationId}) observed ${n} time(s) after dedupe`);
        ok(o.state === "delivered", `${o.content} ended ${o.state}: ${o.lastError}`);
      }
    });
  } else {
    await t.step(`${label}: each effect observed at most once`, () => {
      for (const o of first.obligations) {
        const n = effects.get(o.obligationId) ?? 0;
        ok(
          n <= 1,
          `${o.content} (${o.obligationId}) observed ${n} times by the non-idempotent receiver (pids ${
            s.arrivals.filter((a) => a.obligationId === o.obligationId).map((a) => a.pid).join(", ")
          })`,
        );
      }
    });
  }
  await t.step(`${label}: no obligation silently lost`, () => {
    ok(
      first.obligations.length === expected,
      `${first.obligations.length} obligations recorded, expected ${expected}`,
    );
    const known = new Set(first.obligations.map((o) => o.obligationId));
    const stray = s.arrivals.filter((a) => !known.has(a.obligationId));
    ok(stray.length === 0, `effects of unrecorded obligations: ${JSON.stringify(stray[0])}`);
    const never = neverAttempted(s.kind, expected);
    for (const o of first.obligations) {
      if (o.state === "delivered") {
        ok(
          (effects.get(o.obligationId) ?? 0) >= 1,
          `${o.content} marked delivered, never received`,
        );
      } else if (never.has(o.content)) {
        ok(
          false,
          `${o.content} was never attempted before the crash (a pending orphan), so recovery must deliver it; it ended ${o.state} (${
            JSON.stringify(o.lastError)
          })`,
        );
      } else {
        ok(
          (o.state === "unknown" || o.state === "failed") && !!o.lastError?.trim(),
          `${o.content} left ${o.state} without a reason (${JSON.stringify(o.lastError)})`,
        );
      }
    }
  });
  await t.step(`${label}: outbox states valid, recovery deterministic, invariants`, () => {
    const invalid = first.obligations.filter((o) => !STATES.includes(o.state));
    ok(invalid.length === 0, `invalid states: ${JSON.stringify(invalid)}`);
    deepStrictEqual(second, first);
    const integrity = integrityIfSqlite(s.db);
    ok(integrity === undefined || integrity === "ok", `integrity_check: ${integrity}`);
    deepStrictEqual(first.invariants, []);
  });
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
 * received) or marked unknown/failed with a reason. Outbox states valid, recovery
 * deterministic, invariants hold; an obligation never attempted before the crash (a
 * pending orphan) must end delivered. Every leg. The store's own kill points run when the
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
        for (const s of scenarios) {
          await checkScenario(ctx, t, s, kind === "recorded-unsent" ? IN_FLIGHT + 1 : obligations);
        }
      }
      ctx.note("elapsedMs", Math.round(performance.now() - started));
    },
  }, options);
}
