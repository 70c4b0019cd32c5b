// Cell 6's run, by job: the helpers beside the roles (a long-lived reader pinning
// checkpoints, a lock holder making every role meet SQLITE_BUSY), the roles themselves
// (`children/role_writer.ts`), their start, the seeded kill-and-restart plan, and the end.
// The checks on what they journaled and the store recovered: `_concurrent_checks.ts`.
import { ok } from "node:assert/strict";
import { countReady, releaseBarrier } from "../../harness/barrier.ts";
import { type Child, KillError } from "../../harness/child.ts";
import { killLanding } from "../moves/kill.ts";
import { effectiveModeOrSkip, type ObservedMode, observeJournalMode } from "../../harness/legs.ts";
import { waitFor } from "../../harness/wait_for.ts";
import { exists } from "../../internal/fs.ts";
import type { CellRun } from "../engine/cell.ts";
import { type BusyWindow, busyWindow } from "./busy_window.ts";
import { readRole, type RoleEntry } from "./role_journal.ts";
import { tally } from "../engine/tally.ts";
import { LOCK_HOG, LONG_READER, ROLE_WRITER } from "./_children.ts";
import { readReport } from "../../internal/report_line.ts";

/** The roles: a gateway, a CLI and a cron job writing one file. */
export const ROLES = ["gateway", "cli", "cron"] as const;
/** A role. */
export type Role = typeof ROLES[number];
const WORK: Record<Role, number> = { gateway: 30, cli: 20, cron: 10 };

/** One role across its incarnations. */
export interface RoleRun {
  role: Role;
  total: number;
  journal: string;
  child: Child;
  incarnations: Deno.CommandStatus[];
  killedInFlight: Set<number>;
  /** Operations settled when the current incarnation started. */
  settledAtSpawn: number;
  /** The kill anchor's hold (one role's): the operation it waits before, and its barrier. */
  hold?: { seq: number; barrier: string };
}

/** The role that holds near its end so that a kill lands even on a quick store. */
const ANCHOR: Role = "gateway";

/** What the helpers of a run are, and the knobs of the lock holder. */
export interface Helpers {
  /** Whether the store's file is an SQLite database (the helpers open it with SQLite). */
  sqliteFile: boolean;
  reader?: Child;
  hog?: Child;
  holdMs: number;
  windowMs: number;
  stopReader: string;
  stopHog: string;
  windowFiles: string;
}

/** What the run's phases share: the file, the roles, when it started and must end. */
export interface RolesRun {
  db: string;
  runs: RoleRun[];
  /** `performance.now()` when the run started. */
  started: number;
  /** `performance.now()` by which the run must end. */
  deadlineAt: number;
}

/** Options of the run (a subset of the cell's). */
export interface RunKnobs {
  longReader?: boolean;
  lockHoldMs?: number;
  busyWindowMs?: number;
  kills?: number;
}

/** Operations a role settled (acknowledged or refused). */
export function settledCount(entries: readonly RoleEntry[]): number {
  return entries.filter((e) => e.k === "ack" || e.k === "refused").length;
}

/** The child's exit code, read afresh (past the narrowing of an earlier check). */
function exitCode(child: Child): number | undefined {
  return child.exited?.code;
}

/** A file's size, 0 when it is missing. */
export function fileSize(path: string): number {
  try {
    return Deno.statSync(path).size;
  } catch {
    return 0;
  }
}

/** Why a helper that opens the store's file with SQLite did not run. */
export const NOT_SQLITE = "not run: the store's file is not an SQLite database";

/** The journal mode of the store's file when it is an SQLite database, else `undefined`. */
export function sqliteModeOf(db: string, at: string): ObservedMode | undefined {
  // An empty file is not the store's SQLite database: a store kept elsewhere.
  const mode = observeJournalMode(db, at).mode;
  return fileSize(db) > 0 && mode !== "not-sqlite" && mode !== "missing" ? mode : undefined;
}

/**
 * Starts the helpers beside the roles on an SQLite file: a reader holding a read
 * transaction for the whole run (WAL on disk only), and a lock holder. A store kept in
 * another format runs without them (noted), never a false alarm.
 */
export async function startHelpers(ctx: CellRun, db: string, knobs: RunKnobs): Promise<Helpers> {
  const sqliteFile = sqliteModeOf(db, "before the roles start") !== undefined;
  const walOnDisk = sqliteFile && effectiveModeOrSkip(db, ctx.leg).onDisk === "wal";
  const helpers: Helpers = {
    sqliteFile,
    holdMs: sqliteFile ? knobs.lockHoldMs ?? 20 : 0,
    windowMs: sqliteFile ? knobs.busyWindowMs ?? 1500 : 0,
    stopReader: ctx.run.file("reader.stop"),
    stopHog: ctx.run.file("hog.stop"),
    windowFiles: ctx.run.file("window"),
  };
  if (knobs.longReader !== false && walOnDisk) {
    const ready = ctx.run.file("reader.ready");
    helpers.reader = ctx.spawn(LONG_READER, [db, ready, helpers.stopReader]);
    await waitFor(() => fileSize(ready) > 0, {
      what: "the long-lived reader to open its read transaction",
      deadlineMs: 30_000,
      children: [helpers.reader],
    });
  }
  ctx.note(
    "longReader",
    helpers.reader
      ? "held a read transaction for the whole run"
      : knobs.longReader === false
      ? "off"
      : !sqliteFile
      ? NOT_SQLITE
      : "not run: no WAL on disk (in rollback mode an open reader blocks every writer)",
  );
  if (helpers.holdMs > 0 || helpers.windowMs > 0) {
    const ready = ctx.run.file("hog.ready");
    helpers.hog = ctx.spawn(LOCK_HOG, [
      db,
      ready,
      helpers.stopHog,
      String(helpers.holdMs),
      "60",
      helpers.windowFiles,
    ]);
    await waitFor(() => fileSize(ready) > 0, {
      what: "the lock holder to start",
      deadlineMs: 30_000,
      children: [helpers.hog],
    });
  }
  return helpers;
}

/** Spawns one child per role, each waiting at the start barrier. */
export function spawnRoles(ctx: CellRun, db: string, span: number): RoleRun[] {
  return ROLES.map((role) => {
    const journal = ctx.run.file(`${role}.jsonl`);
    const total = Math.max(4, Math.round(WORK[role] * span));
    const hold = role === ANCHOR ? { seq: total - 2, barrier: ctx.run.file("hold") } : undefined;
    return {
      role,
      total,
      journal,
      child: ctx.spawn(ROLE_WRITER, [
        db,
        journal,
        role,
        String(total),
        "0",
        ctx.run.file("start"),
        hold ? `${hold.seq}:${hold.barrier}` : "-",
      ]),
      incarnations: [],
      killedInFlight: new Set<number>(),
      settledAtSpawn: 0,
      ...(hold ? { hold } : {}),
    };
  });
}

/**
 * Releases the roles once every one has opened the store: inside the busy window when
 * the lock holder runs one (every role then meets SQLITE_BUSY), else at once.
 */
export async function startRoles(
  ctx: CellRun,
  runs: RoleRun[],
  helpers: Helpers,
): Promise<BusyWindow | undefined> {
  await waitFor(() => countReady(ctx.run.path) >= runs.length, {
    what: "every role to open the store",
    deadlineMs: 60_000,
    children: runs.map((run) => run.child),
    observed: () => `${countReady(ctx.run.path)} of ${runs.length} ready`,
  });
  const start = () => releaseBarrier(ctx.run.file("start"));
  if (helpers.hog && helpers.windowMs > 0) {
    const window = await busyWindow(helpers.hog, runs, {
      prefix: helpers.windowFiles,
      start,
      lengthMs: helpers.windowMs,
      deadlineMs: 30_000,
    });
    ctx.note("busyWindow", {
      heldMs: window.releasedAt - window.heldAt,
      invokedWhileHeld: window.invokedWhileHeld,
      ...(window.absent.length ? { metNoWindow: window.absent } : {}),
    });
    return window;
  }
  start();
  ctx.note(
    "busyWindow",
    !helpers.sqliteFile ? "not run: the store's file is not an SQLite database" : "off",
  );
  return undefined;
}

/** Restarts a killed role from the operation after the one it was killed in. */
function restart(ctx: CellRun, db: string, run: RoleRun): void {
  const entries = readRole(run.journal);
  const invoked = entries.filter((e) => e.k === "inv").map((e) => e.seq ?? -1);
  const last = Math.max(-1, ...invoked);
  const settled = new Set(
    entries.filter((e) => e.k === "ack" || e.k === "refused").map((e) => e.seq),
  );
  if (last >= 0 && !settled.has(last)) run.killedInFlight.add(last);
  run.settledAtSpawn = settled.size;
  run.child = ctx.spawn(ROLE_WRITER, [
    db,
    run.journal,
    run.role,
    String(run.total),
    String(last + 1),
    ctx.run.file("start"), // already released: a restarted role goes at once
  ]);
}

/**
 * The kill plan: each kill picks a seeded role among those still at work and kills it
 * once it has settled a seeded fraction of what it had left (at least one operation of
 * this incarnation: never a kill at start-up), then restarts it where it stopped. A role
 * can finish between the check and the kill (a quick store): such a miss is retried on
 * a role still at work, a few times; when none landed, the anchor role, holding before
 * one of its last operations, is killed there, so a kill lands on every store whose
 * roles run at all. Notes the plan as `kills`.
 *
 * @example
 * ```ts ignore
 * const roles = { db, runs: spawnRoles(ctx, db, 1), started, deadlineAt };
 * await killAndRestart(ctx, roles, 2);
 * ```
 */
export async function killAndRestart(
  ctx: CellRun,
  roles: RolesRun,
  kills: number,
): Promise<void> {
  const killLog: string[] = [];
  let landed = 0;
  for (let k = 0; landed < kills && k < kills * 4; k++) {
    const working = roles.runs.filter((run) =>
      run.child.exited === undefined &&
      run.total - settledCount(readRole(run.journal)) >= 3
    );
    const run = working[Math.floor(ctx.random() * working.length)];
    const fraction = ctx.random();
    if (!run) {
      killLog.push(`kill ${k + 1}: every role had finished or nearly`);
      break;
    }
    const attempt = await killMidWork(ctx, roles, { run, fraction });
    if (attempt.landed) landed++;
    killLog.push(attempt.log);
  }
  await anchorKill(ctx, roles, { needed: kills > 0 && landed === 0, killLog });
  ctx.note("kills", killLog);
}

/**
 * Kills `target.run` once it settled its seeded share (`target.fraction` of what it had
 * left), books the kill and restarts it. Returns whether the kill landed (the role may
 * finish first) and the plan's log line.
 */
async function killMidWork(
  ctx: CellRun,
  roles: RolesRun,
  target: { run: RoleRun; fraction: number },
): Promise<{ landed: boolean; log: string }> {
  const { run, fraction } = target;
  const settled = settledCount(readRole(run.journal));
  const at = Math.min(
    // The anchor settles no more than its hold's operation until it is released.
    run.hold?.seq ?? run.total - 1,
    Math.max(settled, run.settledAtSpawn) + 1 + Math.floor(fraction * (run.total - settled) / 2),
  );
  await waitFor(
    () => run.child.exited !== undefined || settledCount(readRole(run.journal)) >= at,
    {
      what: `${run.role} to settle ${at} of ${run.total} operations before its kill`,
      deadlineMs: Math.max(1, roles.deadlineAt - performance.now()),
      intervalMs: 2, // a quick store settles many operations in the default 20 ms
      observed: () => `${settledCount(readRole(run.journal))} settled`,
    },
  );
  if (run.child.exited) {
    return { landed: false, log: `${run.role}: finished before its kill at ${at}` };
  }
  try {
    await killLanding(run.child, `${run.role} mid-work`);
  } catch (error) {
    // It finished in the instant between the check and the kill: not a crash.
    if (!(error instanceof KillError) || exitCode(run.child) !== 0) throw error;
    return { landed: false, log: `${run.role}: finished as it was killed` };
  }
  const log = `${run.role} at ${settledCount(readRole(run.journal))}/${run.total}`;
  killed(ctx, roles.db, run);
  return { landed: true, log };
}

/** Books a landed kill of `run` and restarts it where it stopped (without its hold). */
function killed(ctx: CellRun, db: string, run: RoleRun): void {
  run.incarnations.push(run.child.exited!);
  tally(ctx, "sigkills", 1);
  ctx.observeLeg(db, `${run.role} killed mid-work`);
  delete run.hold;
  restart(ctx, db, run);
}

/**
 * When no timed kill landed (every role was quicker than the kills' polling), kills the
 * anchor where it holds, before one of its last operations: a kill lands on every store
 * that runs its roles at all. Otherwise releases the hold.
 */
async function anchorKill(
  ctx: CellRun,
  roles: RolesRun,
  plan: { needed: boolean; killLog: string[] },
): Promise<void> {
  const anchor = roles.runs.find((run) => run.hold);
  if (!anchor?.hold) return;
  const { seq, barrier } = anchor.hold;
  if (plan.needed) {
    await waitFor(() => anchor.child.exited !== undefined || exists(`${barrier}.held`), {
      what: `${anchor.role} to reach its hold before operation ${seq}`,
      deadlineMs: Math.max(1, roles.deadlineAt - performance.now()),
      observed: () => `${settledCount(readRole(anchor.journal))} settled`,
    });
    if (anchor.child.exited === undefined) {
      await killLanding(anchor.child, `${anchor.role} at its hold`);
      plan.killLog.push(
        `${anchor.role} at its hold before operation ${seq} (no timed kill landed)`,
      );
      killed(ctx, roles.db, anchor);
      return;
    }
  }
  releaseBarrier(barrier);
}

/**
 * Waits for every role to finish its plan (noting `elapsedMs` since `roles.started`), then
 * stops the lock holder and the reader.
 *
 * @example
 * ```ts ignore
 * await finishRoles(ctx, { db, runs, started, deadlineAt }, helpers);
 * ```
 */
export async function finishRoles(
  ctx: CellRun,
  roles: RolesRun,
  helpers: Helpers,
): Promise<void> {
  const { runs, started, deadlineAt } = roles;
  await waitFor(() => runs.every((run) => run.child.exited !== undefined), {
    what: "every role to finish its plan",
    deadlineMs: Math.max(1, deadlineAt - performance.now()),
    observed: () =>
      runs.map((run) => `${run.role} ${settledCount(readRole(run.journal))}/${run.total}`)
        .join(", "),
  });
  for (const run of runs) run.incarnations.push(run.child.exited!);
  ctx.note("elapsedMs", Math.round(performance.now() - started));
  const { hog, reader } = helpers;
  if (hog) {
    releaseBarrier(helpers.stopHog);
    const status = await hog.status;
    ok(status.success, `the lock holder failed: ${hog.describe()}`);
    const { held } = readReport<{ held?: number }>(hog.stdout) ?? {};
    ctx.note("lockHolds", `${held} holds of ${helpers.holdMs} ms every 60 ms`);
  }
  if (reader) {
    releaseBarrier(helpers.stopReader);
    await waitFor(() => reader.exited !== undefined, {
      what: "the long-lived reader to end its transaction",
      deadlineMs: 30_000,
    });
  }
}
