// One life of a handoff file, judged: the states read back against what was acknowledged,
// the pending list against the states, the two reads against each other; then resumed by a
// fresh process that requests one handoff and claims a listed one, and is killed.
import { ok } from "node:assert/strict";
import { readAckJournal } from "../../harness/ack_journal.ts";
import { releaseBarrier } from "../../harness/barrier.ts";
import { waitFor } from "../../harness/wait_for.ts";
import type { CellRun } from "../engine/cell.ts";
import { tally } from "../engine/tally.ts";
import { killReadyAndObserve } from "../moves/kill.ts";
import { withStore } from "../contract/with_store.ts";
import type { HandoffEntry, HandoffState } from "./judge.ts";
import { type HandoffRead, judgedRead } from "./_read.ts";
import { HANDOFFS } from "./_children.ts";

/** A life to judge: its label, file, sessions, their states before it, its journals. */
export interface Life {
  label: string;
  db: string;
  start: Record<string, HandoffState>;
  entries: HandoffEntry[];
}

/**
 * Judges a killed life as three steps, and returns what was read (the next life's start),
 * or `undefined` when a step failed.
 */
export async function judgeLife(
  ctx: CellRun,
  t: Deno.TestContext,
  life: Life,
): Promise<HandoffRead | undefined> {
  const { read, problems, lost, wrong } = await judgedRead(ctx.target, life.db, life);
  tally(ctx, "acknowledgedOps", life.entries.filter((e) => e.k === "ack").length);
  tally(ctx, "lost", lost.length);
  const steps = [
    await t.step(`${life.label}: acknowledged handoffs survive the kill`, () => {
      ok(lost.length === 0, lost.join("; "));
    }),
    await t.step(
      `${life.label}: listPendingHandoffs lists every pending handoff once, and nothing else`,
      () => {
        ok(wrong.length === 0, `${wrong.join("; ")} (listed: ${JSON.stringify(read.listed)})`);
      },
    ),
    await t.step(`${life.label}: recovery deterministic, integrity and invariants`, () => {
      ok(problems.length === 0, problems.join("; "));
    }),
  ];
  return steps.every(Boolean) ? read : undefined;
}

/** Whether `id` is listed by a fresh open of `db`. */
function listedNow(ctx: CellRun, db: string, id: string): Promise<boolean> {
  return withStore(
    ctx.target,
    db,
    async (store) => (await store.listPendingHandoffs!()).some((s) => s.id === id),
  );
}

/**
 * Resume after recovery: a fresh process requests a handoff never requested or settled
 * (seen listed from this process at once), then claims the first listed one and is
 * SIGKILLed right after; the claimed one must be running and gone from the list, the
 * requested one listed. Returns the states read after it, or `undefined` when it failed.
 */
export async function resumeLife(
  ctx: CellRun,
  t: Deno.TestContext,
  life: { label: string; db: string; read: HandoffRead },
): Promise<HandoffRead | undefined> {
  const { label, db, read } = life;
  const idle = Object.keys(read.states).find((id) =>
    read.states[id] !== "pending" &&
    read.states[id] !== "running"
  );
  const request = idle ?? read.listed[0] ?? Object.keys(read.states)[0]!;
  const claim = read.listed[0] ?? request;
  const prefix = ctx.run.file(`${label.replaceAll(/\W+/g, "-")}-resume`);
  const child = ctx.spawn(HANDOFFS, [db, "resume", prefix, request, claim]);
  const entries = () => readAckJournal<HandoffEntry>(`${prefix}.jsonl`);
  await waitFor(() => entries().some((e) => e.k === "ack"), {
    what: `${label}: the fresh process's request of ${request}`,
    deadlineMs: 60_000,
    children: [child],
  });
  const requested = entries().find((e) => e.k === "ack")?.answer === "true";
  const seen = requested ? await listedNow(ctx, db, request) : true;
  releaseBarrier(`${prefix}.seen`);
  await killReadyAndObserve(ctx, child, {
    ready: `${prefix}.ready`,
    what: `${label}: the fresh process's claim of ${claim}`,
    db,
    at: `${label}: killed right after the resumed claim`,
  });
  const claimed = entries().find((e) => e.k === "ack" && e.op === "claimHandoff")?.answer;
  const after = await judgeLife(ctx, t, {
    label: `${label}, resumed`,
    db,
    start: read.states,
    entries: entries(),
  });
  const passed = await t.step(
    `${label}, resumed: a request is listed at once, a listed handoff is claimed and leaves the list`,
    () => {
      ok(
        request === claim || requested,
        `requestHandoff(${request}), never requested or settled, answered false`,
      );
      ok(seen, `the acknowledged request of ${request} is not listed by another process`);
      ok(claimed === "true", `claimHandoff(${claim}), listed as pending, answered ${claimed}`);
    },
  );
  return passed ? after : undefined;
}
