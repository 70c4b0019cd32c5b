import { deepStrictEqual, ok } from "node:assert/strict";
import { type Child, classifyExit, KillError } from "../harness/child.ts";
import { countReady, releaseBarrier } from "../harness/barrier.ts";
import { integrityIfSqlite } from "../harness/db_audit.ts";
import { effectiveModeOrSkip, observeJournalMode } from "../harness/legs.ts";
import { waitFor } from "../harness/wait_for.ts";
import { quantile } from "../internal/stats.ts";
import { type CellRun, defineCell } from "./_cell.ts";
import type { CellOptions } from "./cell_options.ts";
import {
  readRole,
  realTimeViolations,
  type RoleEntry,
  type TimedAppend,
  unfinished,
} from "./_role_journal.ts";
import { type BusyWindow, busyWindow, overlapsWindow } from "./_busy_window.ts";
import { cdf, lineChart } from "./_svg.ts";
import { killLanding } from "./_kill.ts";
import { spanOf } from "./_span.ts";
import { startTallies, tally } from "./_tally.ts";
import { CELL_METHODS, openTargetStore, type StoredSession } from "./target.ts";

/**
 * Options of {@linkcode concurrentWritersCell}.
 *
 * @example
 * ```ts
 * import { concurrentWritersCell, type ConcurrentWritersOptions } from "./concurrent_writers.ts";
 * const options: ConcurrentWritersOptions = {
 *   target: new URL("./reference_target.ts", import.meta.url),
 *   span: 10, // ten times the default work per role
 *   kills: 6,
 *   walBoundBytes: 64 * 1024 * 1024, // fail when the WAL grows past 64 MiB
 * };
 * for (const test of await concurrentWritersCell(options)) Deno.test(test);
 * ```
 */
export interface ConcurrentWritersOptions extends CellOptions {
  /**
   * How much work: the gateway does 30 × span operations, the CLI 20 × span, the cron
   * role 10 × span (default `CELLS_SPAN`, else 1: a few seconds).
   */
  span?: number;
  /** SIGKILLs of a random role mid-work, each followed by its restart (default 2). */
  kills?: number;
  /** Hold a read transaction open for the whole run (WAL on disk only; default true). */
  longReader?: boolean;
  /**
   * Hold the write lock this many ms of every 60 ms while the roles write, so that each
   * of them meets a busy lock (default 20; 0 turns it off).
   */
  lockHoldMs?: number;
  /**
   * Hold the write lock from another process as the roles start, for at least this many
   * ms and until every role has invoked an operation against it, so that each meets
   * SQLITE_BUSY past a 1 s busy timeout on every run (default 1500; 0 turns it off). Set
   * it above your store's busy timeout to judge what the store does when that runs out.
   * SQLite files only.
   */
  busyWindowMs?: number;
  /** Fail when the WAL file grows past this many bytes (default: measure only). */
  walBoundBytes?: number;
  /** Most typed busy refusals allowed across the roles (default: any, counted). */
  maxRefusals?: number;
  /** A busy refusal must come after trying at least this long (default 1000 ms). */
  minBusyWaitMs?: number;
  /** How long the whole run may take (default 120 s). */
  deadlineMs?: number;
}

const ROLES = ["gateway", "cli", "cron"] as const;
type Role = typeof ROLES[number];
const WORK: Record<Role, number> = { gateway: 30, cli: 20, cron: 10 };

interface RoleRun {
  role: Role;
  total: number;
  journal: string;
  child: Child;
  incarnations: Deno.CommandStatus[];
  killedInFlight: Set<number>;
  /** Operations settled when the current incarnation started. */
  settledAtSpawn: number;
}

function settledCount(entries: readonly RoleEntry[]): number {
  return entries.filter((e) => e.k === "ack" || e.k === "refused").length;
}

/** The child's exit code, read afresh (past the narrowing of an earlier check). */
function exitCode(child: Child): number | undefined {
  return child.exited?.code;
}

function fileSize(path: string): number {
  try {
    return Deno.statSync(path).size;
  } catch {
    return 0;
  }
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

/** Restarts a killed role from the operation after the one it was killed in. */
function restart(ctx: CellRun, db: string, run: RoleRun, entries: readonly RoleEntry[]): void {
  const invoked = entries.filter((e) => e.k === "inv").map((e) => e.seq ?? -1);
  const last = Math.max(-1, ...invoked);
  const settled = new Set(
    entries.filter((e) => e.k === "ack" || e.k === "refused").map((e) => e.seq),
  );
  if (last >= 0 && !settled.has(last)) run.killedInFlight.add(last);
  run.settledAtSpawn = settled.size;
  run.child = ctx.spawn("role_writer.ts", [
    db,
    run.journal,
    run.role,
    String(run.total),
    String(last + 1),
    ctx.run.file("start"), // already released: a restarted role goes at once
  ]);
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

/**
 * Cell 6, concurrent writers: several processes writing one file lose nothing and never
 * fail silently. A gateway role appends to many sessions and to one long session that
 * a CLI role also appends to, while a cron role records outbox obligations and rotates
 * its own sessions (when the store has those methods); each journals every invocation
 * and acknowledgement. On an SQLite file another process holds the write lock when the
 * roles start, until each has invoked an operation against it and the busy window
 * passed (so every role meets SQLITE_BUSY on every run), and then for a few ms of every
 * 60. A seeded plan SIGKILLs a role mid-work and restarts it, while (in WAL mode) a
 * long-lived reader pins checkpoints. Must hold: every acknowledged operation of every
 * process survives; an append acknowledged before another was
 * invoked has the smaller id; ids strictly increase in each session; every returned id
 * is the committed row's; no process sees an error other than a typed busy refusal
 * (`BusyDeadlineError`, after at least its busy deadline, changing nothing, counted per
 * role); no process exits 0 without finishing its plan; integrity and the store's
 * invariants hold and recovery reads the same twice. Reports p50/p99 append latency
 * and refusals per role, and the WAL size over time (SVG plots beside the evidence).
 * Every leg.
 *
 * @param options Target, leg, span, kills, bounds.
 * @returns The test definitions to register with `Deno.test`.
 * @example
 * ```ts
 * import { concurrentWritersCell } from "./concurrent_writers.ts";
 * const target = new URL("./reference_target.ts", import.meta.url);
 * for (const test of await concurrentWritersCell({ target, maxRefusals: 0 })) Deno.test(test);
 * ```
 */
export function concurrentWritersCell(
  options: ConcurrentWritersOptions,
): Promise<Deno.TestDefinition[]> {
  const span = spanOf(options.span);
  return defineCell({
    id: 6,
    title: "concurrent writers",
    legs: "all",
    requires: CELL_METHODS[6],
    async run(ctx, t) {
      startTallies(ctx);
      const started = performance.now();
      const deadlineMs = options.deadlineMs ?? 120_000;
      const db = ctx.run.file("store.db");
      // The file exists, in the leg's mode, before the reader and the roles race to it.
      await (await openTargetStore(ctx.target, db)).close();

      const walPath = `${db}-wal`;
      const wal: [number, number][] = [];
      const sampler = setInterval(() => {
        wal.push([Math.round(performance.now() - started), fileSize(walPath)]);
      }, 50);
      let reader: Child | undefined;
      const stopReader = ctx.run.file("reader.stop");
      // The reader and the lock holder open the file with SQLite: a store kept in
      // another format runs without them (noted), never a false alarm.
      // An empty file is not the store's SQLite database: a store kept elsewhere.
      const onDisk = observeJournalMode(db, "before the roles start").mode;
      const sqliteFile = fileSize(db) > 0 && onDisk !== "not-sqlite" && onDisk !== "missing";
      const walOnDisk = sqliteFile && effectiveModeOrSkip(db, ctx.leg).onDisk === "wal";
      try {
        if (options.longReader !== false && walOnDisk) {
          const ready = ctx.run.file("reader.ready");
          reader = ctx.spawn("long_reader.ts", [db, ready, stopReader]);
          await waitFor(() => fileSize(ready) > 0, {
            what: "the long-lived reader to open its read transaction",
            deadlineMs: 30_000,
            children: [reader],
          });
        }
        ctx.note(
          "longReader",
          reader
            ? "held a read transaction for the whole run"
            : options.longReader === false
            ? "off"
            : !sqliteFile
            ? "not run: the store's file is not an SQLite database"
            : "not run: no WAL on disk (in rollback mode an open reader blocks every writer)",
        );

        const holdMs = sqliteFile ? options.lockHoldMs ?? 20 : 0;
        const windowMs = sqliteFile ? options.busyWindowMs ?? 1500 : 0;
        let hog: Child | undefined;
        const stopHog = ctx.run.file("hog.stop");
        const windowFiles = ctx.run.file("window");
        if (holdMs > 0 || windowMs > 0) {
          const ready = ctx.run.file("hog.ready");
          hog = ctx.spawn("lock_hog.ts", [
            db,
            ready,
            stopHog,
            String(holdMs),
            "60",
            windowFiles,
          ]);
          await waitFor(() => fileSize(ready) > 0, {
            what: "the lock holder to start",
            deadlineMs: 30_000,
            children: [hog],
          });
        }
        const runs: RoleRun[] = ROLES.map((role) => {
          const journal = ctx.run.file(`${role}.jsonl`);
          const total = Math.max(4, Math.round(WORK[role] * span));
          return {
            role,
            total,
            journal,
            child: ctx.spawn("role_writer.ts", [
              db,
              journal,
              role,
              String(total),
              "0",
              ctx.run.file("start"),
            ]),
            incarnations: [],
            killedInFlight: new Set<number>(),
            settledAtSpawn: 0,
          };
        });

        await waitFor(() => countReady(ctx.run.path) >= runs.length, {
          what: "every role to open the store",
          deadlineMs: 60_000,
          children: runs.map((run) => run.child),
          observed: () => `${countReady(ctx.run.path)} of ${runs.length} ready`,
        });
        const start = () => releaseBarrier(ctx.run.file("start"));
        let window: BusyWindow | undefined;
        if (hog && windowMs > 0) {
          window = await busyWindow(windowFiles, hog, runs, start, windowMs, 30_000);
          ctx.note("busyWindow", {
            heldMs: window.releasedAt - window.heldAt,
            invokedWhileHeld: window.invokedWhileHeld,
            ...(window.absent.length ? { metNoWindow: window.absent } : {}),
          });
        } else {
          start();
          ctx.note(
            "busyWindow",
            !sqliteFile ? "not run: the store's file is not an SQLite database" : "off",
          );
        }
        // The kill plan: each kill picks a seeded role among those still at work and
        // kills it once it has settled a seeded fraction of what it had left (at least
        // one operation of this incarnation: never a kill at start-up), then restarts
        // it where it stopped.
        const kills = options.kills ?? 2;
        const killLog: string[] = [];
        // A role can finish between the check and the kill (a quick store): such a miss
        // is retried on a role still at work, a few times, so the kills land.
        let landed = 0;
        for (let k = 0; landed < kills && k < kills * 4; k++) {
          const working = runs.filter((run) =>
            run.child.exited === undefined &&
            run.total - settledCount(readRole(run.journal)) >= 3
          );
          const run = working[Math.floor(ctx.random() * working.length)];
          const fraction = ctx.random();
          if (!run) {
            killLog.push(`kill ${k + 1}: every role had finished or nearly`);
            break;
          }
          const settled = settledCount(readRole(run.journal));
          const at = Math.min(
            run.total - 1,
            Math.max(settled, run.settledAtSpawn) + 1 +
              Math.floor(fraction * (run.total - settled) / 2),
          );
          await waitFor(
            () => run.child.exited !== undefined || settledCount(readRole(run.journal)) >= at,
            {
              what: `${run.role} to settle ${at} of ${run.total} operations before its kill`,
              deadlineMs: Math.max(1, deadlineMs - (performance.now() - started)),
              intervalMs: 2, // a quick store settles many operations in the default 20 ms
              observed: () => `${settledCount(readRole(run.journal))} settled`,
            },
          );
          if (run.child.exited) {
            killLog.push(`${run.role}: finished before its kill at ${at}`);
            continue;
          }
          try {
            await killLanding(run.child, `${run.role} mid-work`);
          } catch (error) {
            // It finished in the instant between the check and the kill: not a crash.
            if (!(error instanceof KillError) || exitCode(run.child) !== 0) throw error;
            killLog.push(`${run.role}: finished as it was killed`);
            continue;
          }
          run.incarnations.push(run.child.exited!);
          landed++;
          tally(ctx, "sigkills", 1);
          ctx.observeLeg(db, `${run.role} killed mid-work`);
          const entries = readRole(run.journal);
          killLog.push(`${run.role} at ${settledCount(entries)}/${run.total}`);
          restart(ctx, db, run, entries);
        }
        ctx.note("kills", killLog);
        await waitFor(() => runs.every((run) => run.child.exited !== undefined), {
          what: "every role to finish its plan",
          deadlineMs: Math.max(1, deadlineMs - (performance.now() - started)),
          observed: () =>
            runs.map((run) => `${run.role} ${settledCount(readRole(run.journal))}/${run.total}`)
              .join(", "),
        });
        for (const run of runs) run.incarnations.push(run.child.exited!);
        ctx.note("elapsedMs", Math.round(performance.now() - started));
        if (hog) {
          releaseBarrier(stopHog);
          const status = await hog.status;
          ok(status.success, `the lock holder failed: ${hog.describe()}`);
          const { held } = JSON.parse(hog.stdout.trim() || "{}") as { held?: number };
          ctx.note("lockHolds", `${held} holds of ${holdMs} ms every 60 ms`);
        }
        if (reader) {
          releaseBarrier(stopReader);
          await waitFor(() => reader!.exited !== undefined, {
            what: "the long-lived reader to end its transaction",
            deadlineMs: 30_000,
          });
        }
        clearInterval(sampler);
        wal.push([Math.round(performance.now() - started), fileSize(walPath)]);
        await check(ctx, t, db, runs, wal, options, window);
      } finally {
        clearInterval(sampler);
      }
    },
  }, options);
}

async function check(
  ctx: CellRun,
  t: Deno.TestContext,
  db: string,
  runs: RoleRun[],
  wal: [number, number][],
  options: ConcurrentWritersOptions,
  window: BusyWindow | undefined,
): Promise<void> {
  const journals = new Map(runs.map((run) => [run.role, readRole(run.journal)]));
  const acks = runs.flatMap((run) =>
    journals.get(run.role)!.filter((e) => e.k === "ack").map((e) => ({ ...e, role: run.role }))
  );
  const refused = runs.flatMap((run) =>
    journals.get(run.role)!.filter((e) => e.k === "refused").map((e) => ({ ...e, role: run.role }))
  );
  const appends = acks.filter((a) => a.op === "append");
  const sessionIds = [...new Set(appends.map((a) => a.session!))].sort();
  const first = await recover(ctx.target, db, sessionIds);
  const second = await recover(ctx.target, db, sessionIds);

  // Figures: latency and refusals per role, WAL growth.
  const latencies: Record<string, number[]> = {};
  const perRole: Record<string, unknown> = {};
  for (const run of runs) {
    // The busy window's waits measure the window, not the store.
    const mine = appends.filter((a) => a.role === run.role && !overlapsWindow(window, a))
      .map((a) => a.ms ?? 0);
    latencies[run.role] = mine;
    perRole[run.role] = {
      planned: run.total,
      acknowledged: acks.filter((a) => a.role === run.role).length,
      refusals: refused.filter((r) => r.role === run.role).length,
      appendP50Ms: +quantile(mine, 0.5).toFixed(2),
      appendP99Ms: +quantile(mine, 0.99).toFixed(2),
      incarnations: run.incarnations.length,
    };
  }
  ctx.note("roles", perRole);
  const walMax = Math.max(0, ...wal.map((p) => p[1]));
  ctx.note("walMaxBytes", walMax);
  ctx.note("walSamples", wal.length);
  plots(ctx, wal, latencies);
  tally(ctx, "acknowledgedOps", acks.length);

  const stored = new Map<string, { id: number; content: string | null }[]>(
    Object.entries(first.messages),
  );
  const lostAppends = appends.filter((a) =>
    !stored.get(a.session!)?.some((m) => m.id === a.id && m.content === a.content)
  );
  const obligationIds = new Set(first.obligations?.map((o) => o.obligationId) ?? []);
  const lostObligations = acks.filter((a) =>
    a.op === "obligation" && !obligationIds.has(String(a.id))
  );
  const sessions = new Map((first.sessions ?? []).map((s) => [s.id, s]));
  const lostRotations = acks.filter((a) =>
    a.op === "rotate" &&
    !(sessions.get(a.parentId!)?.endReason === "compression" &&
      sessions.get(a.childId!)?.parentSessionId === a.parentId)
  );
  tally(ctx, "lost", lostAppends.length + lostObligations.length + lostRotations.length);

  await t.step("no untyped error: every process ended by our SIGKILL or by finishing", () => {
    for (const run of runs) {
      const errors = journals.get(run.role)!.filter((e) => e.k === "error");
      ok(errors.length === 0, `${run.role}: ${errors[0]?.name}: ${errors[0]?.message}`);
      for (const status of run.incarnations) {
        const kind = classifyExit(status).kind;
        ok(
          kind === "killed" || kind === "won",
          `${run.role} exited with code ${status.code}${
            status.signal ? ` (${status.signal})` : ""
          }: ${run.child.describe()}`,
        );
      }
    }
  });
  await t.step("no process exits 0 without finishing its work", () => {
    for (const run of runs) {
      const entries = journals.get(run.role)!;
      const missing = unfinished(entries, run.total, run.killedInFlight);
      ok(
        entries.some((e) => e.k === "done") && missing.length === 0,
        `${run.role} exited ${
          run.incarnations.at(-1)?.code
        } with ${missing.length} of ${run.total} operations never settled (first #${missing[0]})${
          entries.some((e) => e.k === "done") ? "" : " and no done mark"
        }`,
      );
    }
  });
  await t.step("no silent success: every returned id is a positive integer", () => {
    const bad = appends.filter((a) => !(Number.isSafeInteger(a.id) && Number(a.id) > 0));
    ok(bad.length === 0, `${bad.length} append(s) returned ${JSON.stringify(bad[0]?.id)}`);
  });
  await t.step(`every acknowledged operation survives: ${acks.length} acknowledged`, () => {
    ok(
      lostAppends.length === 0,
      `${lostAppends.length} acknowledged append(s) lost or changed, first: ${
        JSON.stringify(lostAppends[0])
      }`,
    );
    ok(
      lostObligations.length === 0,
      `${lostObligations.length} acknowledged obligation(s) lost, first: ${
        JSON.stringify(lostObligations[0])
      }`,
    );
    ok(
      lostRotations.length === 0,
      `${lostRotations.length} acknowledged rotation(s) incomplete, first: ${
        JSON.stringify(lostRotations[0])
      }`,
    );
  });
  await t.step("real-time order: acknowledged before invoked means the smaller id", () => {
    const timed: TimedAppend[] = appends.map((a) => ({
      role: a.role,
      seq: a.seq!,
      session: a.session!,
      content: a.content!,
      id: Number(a.id),
      t0: a.t0!,
      t1: a.t1!,
    }));
    const violations = realTimeViolations(timed);
    ok(violations.length === 0, violations.join("; "));
  });
  await t.step("ids strictly increase in every session and every role", () => {
    for (const [session, rows] of stored) {
      const bad = rows.findIndex((row, i) => i > 0 && row.id <= rows[i - 1]!.id);
      ok(bad === -1, `session ${session}: id ${rows[bad]?.id} at ${bad} does not increase`);
    }
    for (const run of runs) {
      const ids = appends.filter((a) => a.role === run.role).map((a) => Number(a.id));
      const bad = ids.findIndex((id, i) => i > 0 && id <= ids[i - 1]!);
      ok(bad === -1, `${run.role}: acknowledged id ${ids[bad]} after ${ids[bad - 1]}`);
    }
  });
  const minWait = options.minBusyWaitMs ?? 1000;
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
      const max = options.maxRefusals ?? Infinity;
      ok(refused.length <= max, `${refused.length} busy refusal(s), more than ${max} at this load`);
    },
  );
  await t.step("recovery deterministic, integrity and invariants", () => {
    deepStrictEqual(second, first);
    const integrity = integrityIfSqlite(db);
    ok(integrity === undefined || integrity === "ok", `integrity_check: ${integrity}`);
    deepStrictEqual(first.invariants, []);
  });
  if (window) {
    await t.step("every role met the busy window", () => {
      ok(
        window.absent.length === 0,
        `${window.absent.join(", ")} invoked no operation while the write lock was held`,
      );
    });
  }
  // Last: a mutant that crashed every role before the kills is caught for that.
  if ((options.kills ?? 2) > 0) {
    await t.step("a role was SIGKILLed mid-work and restarted", () => {
      ok(Number(ctx.figures.sigkills) >= 1, `no kill landed: ${JSON.stringify(ctx.figures.kills)}`);
    });
  }
  if (options.walBoundBytes !== undefined) {
    await t.step(`WAL stays under ${options.walBoundBytes} bytes`, () => {
      ok(walMax <= options.walBoundBytes!, `the WAL grew to ${walMax} bytes`);
    });
  }
}
