// Cell 6's checks, once every role finished: what the store recovered (twice), the
// figures (latency and refusals per role, WAL growth, plots), and the steps, grouped by
// what they judge: how each process ended, what survived, in which order, the refusals,
// and recovery itself.
import { deepStrictEqual, ok } from "node:assert/strict";
import { classifyExit } from "../../harness/child.ts";
import { integrityIfSqlite } from "../../harness/db_audit.ts";
import { quantile } from "../../internal/stats.ts";
import type { CellRun } from "../engine/cell.ts";
import { type BusyWindow, overlapsWindow } from "./busy_window.ts";
import { checkOpenWindow, type OpenWindow } from "./open_window.ts";
import type { RoleRun } from "./roles.ts";
import {
  readRole,
  realTimeViolations,
  type RoleEntry,
  staleReads,
  type TimedAppend,
  unfinished,
} from "./role_journal.ts";
import { cdf, lineChart } from "./svg.ts";
import { tally } from "../engine/tally.ts";
import { diagnosed } from "../engine/diagnoses.ts";
import { openTargetStore, type StoredSession } from "../contract/target.ts";

/** What a check of cell 6 may bound (a subset of the cell's options). */
export interface CheckBounds {
  maxRefusals?: number;
  minBusyWaitMs?: number;
  kills?: number;
  walBoundBytes?: number;
}

interface Recovered {
  messages: Record<string, { id: number; content: string | null }[]>;
  sessions: StoredSession[] | undefined;
  obligations: { obligationId: string; content: string }[] | undefined;
  invariants: string[];
}

async function recover(target: string, db: string, sessionIds: string[]): Promise<Recovered> {
  const store = await openTargetStore(target, db);
  try {
    const messages: Recovered["messages"] = {};
    for (const id of sessionIds) {
      messages[id] = (await store.getMessages(id)).map((m) => ({ id: m.id, content: m.content }));
    }
    const sessions = store.listSessions
      ? (await store.listSessions()).map((s) => ({
        id: s.id,
        parentSessionId: s.parentSessionId,
        endedAt: s.endedAt,
        endReason: s.endReason,
      })).sort((a, b) => a.id.localeCompare(b.id))
      : undefined;
    const obligations = store.listObligations
      ? (await store.listObligations()).map((o) => ({
        obligationId: o.obligationId,
        content: o.content,
      }))
      : undefined;
    const invariants = store.checkInvariants ? await store.checkInvariants() : [];
    return { messages, sessions, obligations, invariants };
  } finally {
    await store.close();
  }
}

function plots(ctx: CellRun, wal: [number, number][], latencies: Record<string, number[]>) {
  ctx.attach(
    "wal_size.svg",
    lineChart({
      title: `WAL size while the writers run (${ctx.leg.name} leg)`,
      xLabel: "time (ms)",
      yLabel: "WAL bytes",
      series: [{ name: "-wal file", points: wal }],
    }),
  );
  ctx.attach(
    "append_latency.svg",
    lineChart({
      title: "Append latency per role (cumulative distribution)",
      xLabel: "latency (ms)",
      yLabel: "fraction of appends",
      series: Object.entries(latencies).map(([name, values]) => ({
        name,
        points: cdf(values),
      })),
    }),
  );
}

/** An entry of a role's journal, with its role. */
type Entry = RoleEntry & { role: string };

/** What the checks read: the roles' journals and what the store recovered. */
interface Run {
  runs: RoleRun[];
  journals: Map<string, RoleEntry[]>;
  acks: Entry[];
  refused: Entry[];
  appends: Entry[];
  reads: Entry[];
  first: Recovered;
  second: Recovered;
  stored: Map<string, { id: number; content: string | null }[]>;
}

async function readRun(ctx: CellRun, db: string, runs: RoleRun[]): Promise<Run> {
  const journals = new Map(runs.map((run) => [run.role, readRole(run.journal)]));
  const entries = (k: RoleEntry["k"]) =>
    runs.flatMap((run) =>
      journals.get(run.role)!.filter((e) => e.k === k).map((e) => ({ ...e, role: run.role }))
    );
  const acks = entries("ack");
  const appends = acks.filter((a) => a.op === "append");
  const sessionIds = [...new Set(appends.map((a) => a.session!))].sort();
  const first = await recover(ctx.target, db, sessionIds);
  const second = await recover(ctx.target, db, sessionIds);
  const stored = new Map(Object.entries(first.messages));
  const reads = entries("read");
  return {
    runs,
    journals,
    acks,
    refused: entries("refused"),
    appends,
    reads,
    first,
    second,
    stored,
  };
}

/** Figures: latency and refusals per role, WAL growth, the plots. */
function noteFigures(
  ctx: CellRun,
  run: Run,
  finished: Pick<FinishedRun, "wal" | "window">,
): number {
  const { wal, window } = finished;
  const latencies: Record<string, number[]> = {};
  const perRole: Record<string, unknown> = {};
  for (const { role, total, incarnations } of run.runs) {
    // The busy window's waits measure the window, not the store.
    const mine = run.appends.filter((a) => a.role === role && !overlapsWindow(window, a))
      .map((a) => a.ms ?? 0);
    latencies[role] = mine;
    perRole[role] = {
      planned: total,
      acknowledged: run.acks.filter((a) => a.role === role).length,
      refusals: run.refused.filter((r) => r.role === role).length,
      appendP50Ms: +quantile(mine, 0.5).toFixed(2),
      appendP99Ms: +quantile(mine, 0.99).toFixed(2),
      incarnations: incarnations.length,
    };
  }
  ctx.note("roles", perRole);
  const walMax = Math.max(0, ...wal.map((p) => p[1]));
  ctx.note("walMaxBytes", walMax);
  ctx.note("walSamples", wal.length);
  plots(ctx, wal, latencies);
  tally(ctx, "acknowledgedOps", run.acks.length);
  return walMax;
}

/** How each process ended: no untyped error, no exit 0 mid-work. */
async function endings(t: Deno.TestContext, run: Run): Promise<void> {
  await t.step("no untyped error: every process ended by our SIGKILL or by finishing", () => {
    for (const role of run.runs) {
      const errors = run.journals.get(role.role)!.filter((e) => e.k === "error");
      diagnosed(
        errors[0]?.busy && "busy-untyped",
        () => ok(errors.length === 0, `${role.role}: ${errors[0]?.name}: ${errors[0]?.message}`),
      );
      for (const status of role.incarnations) {
        const kind = classifyExit(status).kind;
        ok(
          kind === "killed" || kind === "won",
          `${role.role} exited with code ${status.code}${
            status.signal ? ` (${status.signal})` : ""
          }: ${role.child.describe()}`,
        );
      }
    }
  });
  await t.step("no process exits 0 without finishing its work", () => {
    for (const role of run.runs) {
      const entries = run.journals.get(role.role)!;
      const missing = unfinished(entries, role.total, role.killedInFlight);
      ok(
        entries.some((e) => e.k === "done") && missing.length === 0,
        `${role.role} exited ${
          role.incarnations.at(-1)?.code
        } with ${missing.length} of ${role.total} operations never settled (first #${missing[0]})${
          entries.some((e) => e.k === "done") ? "" : " and no done mark"
        }`,
      );
    }
  });
}

/** The acknowledged operations the recovered store lacks, by kind. */
interface Losses {
  appends: Entry[];
  obligations: Entry[];
  rotations: Entry[];
}

function lossesOf(run: Run): Losses {
  const { acks, appends, first, stored } = run;
  const lostAppends = appends.filter((a) =>
    !stored.get(a.session!)?.some((m) => m.id === a.id && m.content === a.content)
  );
  const obligationIds = new Set(first.obligations?.map((o) => o.obligationId) ?? []);
  const lostObligations = acks.filter((a) =>
    a.op === "obligation" && !obligationIds.has(a.id as string)
  );
  const sessions = new Map((first.sessions ?? []).map((s) => [s.id, s]));
  const lostRotations = acks.filter((a) =>
    a.op === "rotate" &&
    !(sessions.get(a.parentId!)?.endReason === "compression" &&
      sessions.get(a.childId!)?.parentSessionId === a.parentId)
  );
  return { appends: lostAppends, obligations: lostObligations, rotations: lostRotations };
}

/** What survived: every returned id real, every acknowledged operation there. */
async function survival(t: Deno.TestContext, run: Run, lost: Losses): Promise<void> {
  const { acks, appends } = run;
  await t.step("every role wrote: each had operations acknowledged, not only refused", () => {
    // A role whose every write was refused leaves nothing to judge of it: nothing judged
    // is never a pass.
    const idle = run.runs.map((r) => r.role).filter((role) => !acks.some((a) => a.role === role));
    ok(idle.length === 0, `${idle.join(", ")}: no operation acknowledged, every one refused`);
  });
  // An integer, not a positive one: the contract asks ids to increase, not where they start
  // (a store counting from 0 is correct); an id that was never written is judged by survival.
  await t.step("no silent success: every returned id is an integer", () => {
    const bad = appends.filter((a) => !Number.isSafeInteger(a.id));
    ok(bad.length === 0, `${bad.length} append(s) returned ${JSON.stringify(bad[0]?.id)}`);
  });
  await t.step(`every acknowledged operation survives: ${acks.length} acknowledged`, () => {
    const none = (missing: Entry[], what: string) =>
      ok(missing.length === 0, `${missing.length} ${what}, first: ${JSON.stringify(missing[0])}`);
    none(lost.appends, "acknowledged append(s) lost or changed");
    none(lost.obligations, "acknowledged obligation(s) lost");
    none(lost.rotations, "acknowledged rotation(s) incomplete");
  });
}

/** In which order: real-time order of ids, ids increasing per session and per role. */
async function order(t: Deno.TestContext, run: Run): Promise<void> {
  const timed: TimedAppend[] = run.appends.map((a) => ({
    role: a.role,
    seq: a.seq!,
    session: a.session!,
    content: a.content!,
    id: Number(a.id),
    t0: a.t0!,
    t1: a.t1!,
  }));
  await t.step("real-time order: acknowledged before invoked means the smaller id", () => {
    const violations = realTimeViolations(timed);
    ok(violations.length === 0, violations.join("; "));
  });
  await t.step(
    `every read holds what was acknowledged before it: ${run.reads.length} reads`,
    () => {
      const reads = run.reads.map((r) => ({
        role: r.role,
        session: r.session!,
        ids: (r.ids ?? []).map(Number),
        t0: r.t0!,
      }));
      const stale = staleReads(timed, reads);
      diagnosed(stale.length > 0 && "stale-read", () => ok(stale.length === 0, stale.join("; ")));
    },
  );
  await t.step("ids strictly increase in every session and every role", () => {
    for (const [session, rows] of run.stored) {
      const bad = rows.findIndex((row, i) => i > 0 && row.id <= rows[i - 1]!.id);
      ok(bad === -1, `session ${session}: id ${rows[bad]?.id} at ${bad} does not increase`);
    }
    for (const role of run.runs) {
      const ids = run.appends.filter((a) => a.role === role.role).map((a) => Number(a.id));
      const bad = ids.findIndex((id, i) => i > 0 && id <= ids[i - 1]!);
      ok(bad === -1, `${role.role}: acknowledged id ${ids[bad]} after ${ids[bad - 1]}`);
    }
  });
}

/** The refusals (typed, late enough, not durable, bounded) and recovery itself. */
async function refusalsAndRecovery(
  t: Deno.TestContext,
  run: Run,
  finished: Pick<FinishedRun, "db" | "bounds">,
): Promise<void> {
  const { db, bounds } = finished;
  const { refused, stored, first, second } = run;
  const minWait = bounds.minBusyWaitMs ?? 1000;
  await t.step(
    `busy refusals typed, after >= ${minWait} ms, not durable: ${refused.length}`,
    () => {
      const early = refused.filter((r) => (r.ms ?? 0) < minWait);
      ok(
        early.length === 0,
        `${early.length} refusal(s) came before the busy deadline, first after ${
          early[0]?.ms?.toFixed(0)
        } ms (${early[0]?.role} #${early[0]?.seq})`,
      );
      const contents = new Set([...stored.values()].flat().map((m) => m.content));
      const durable = refused.filter((r) => r.op === "append" && contents.has(r.content ?? null));
      ok(durable.length === 0, `refused append ${durable[0]?.content} is in the store`);
      const max = bounds.maxRefusals ?? Infinity;
      ok(refused.length <= max, `${refused.length} busy refusal(s), more than ${max} at this load`);
    },
  );
  await t.step("recovery deterministic, integrity and invariants", () => {
    deepStrictEqual(second, first);
    const integrity = integrityIfSqlite(db);
    ok(integrity === undefined || integrity === "ok", `integrity_check: ${integrity}`);
    deepStrictEqual(first.invariants, []);
  });
}

/** A finished run of cell 6, for {@linkcode checkConcurrentRun}. */
export interface FinishedRun {
  db: string;
  /** The roles, finished. */
  runs: RoleRun[];
  /** WAL size samples: [ms since the start, bytes]. */
  wal: [number, number][];
  /** The bounds the checks hold it to. */
  bounds: CheckBounds;
  /** The busy window, when one ran. */
  window: BusyWindow | undefined;
  /** The open window, when one ran. */
  openWindow?: OpenWindow;
}

/**
 * Cell 6's checks on a finished run: reads what the roles journaled and what the store
 * recovered, notes the figures, and runs every step.
 *
 * @example
 * ```ts ignore
 * await checkConcurrentRun(ctx, t, { db, runs, wal, bounds: options, window });
 * ```
 */
export async function checkConcurrentRun(
  ctx: CellRun,
  t: Deno.TestContext,
  finished: FinishedRun,
): Promise<void> {
  const { db, runs, bounds, window } = finished;
  const run = await readRun(ctx, db, runs);
  const walMax = noteFigures(ctx, run, finished);
  const lost = lossesOf(run);
  tally(ctx, "lost", lost.appends.length + lost.obligations.length + lost.rotations.length);
  await endings(t, run);
  await survival(t, run, lost);
  await order(t, run);
  await refusalsAndRecovery(t, run, finished);
  if (window) {
    await t.step("every role met the busy window", () => {
      ok(
        window.absent.length === 0,
        `${window.absent.join(", ")} invoked no operation while the write lock was held`,
      );
    });
  }
  if (finished.openWindow) {
    await checkOpenWindow(t, finished.openWindow, bounds.minBusyWaitMs ?? 1000);
  }
  // Last: a mutant that crashed every role before the kills is caught for that.
  if ((bounds.kills ?? 2) > 0) {
    await t.step("a role was SIGKILLed mid-work and restarted", () => {
      ok(Number(ctx.figures.sigkills) >= 1, `no kill landed: ${JSON.stringify(ctx.figures.kills)}`);
    });
  }
  if (bounds.walBoundBytes !== undefined) {
    await t.step(`WAL stays under ${bounds.walBoundBytes} bytes`, () => {
      ok(walMax <= bounds.walBoundBytes!, `the WAL grew to ${walMax} bytes`);
    });
  }
}
