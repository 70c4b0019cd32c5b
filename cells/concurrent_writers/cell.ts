import { type CellRun, defineCell } from "../engine/cell.ts";
import type { CellOptions } from "../engine/options.ts";
import { checkConcurrentRun } from "./checks.ts";
import {
  fileSize,
  finishRoles,
  killAndRestart,
  NOT_SQLITE,
  type RolesRun,
  spawnRoles,
  sqliteModeOf,
  startHelpers,
  startRoles,
} from "./roles.ts";
import { spanOf } from "../engine/span.ts";
import { startTallies } from "../engine/tally.ts";
import { openTargetStore } from "../contract/target.ts";
import { type OpenWindow, openWindow } from "./open_window.ts";

/**
 * Options of {@linkcode concurrentWritersCell}.
 *
 * @example
 * ```ts
 * import { concurrentWritersCell, type ConcurrentWritersOptions } from "./cell.ts";
 * const options: ConcurrentWritersOptions = {
 *   target: new URL("../reference_target.ts", import.meta.url),
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
   * Also how long another process holds a new file while a process of the store opens it
   * (the open window). SQLite files only.
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

/**
 * Cell 6, concurrent writers: several processes writing one file lose nothing and never
 * fail silently. A gateway role appends to many sessions and to one long session that
 * a CLI role also appends to, while a cron role records outbox obligations and rotates
 * its own sessions (when the store has those methods); each journals every invocation
 * and acknowledgement. On an SQLite file another process holds the write lock when the
 * roles start, until each has invoked an operation against it and the busy window
 * passed (so every role meets SQLITE_BUSY on every run), and then for a few ms of every
 * 60. A seeded plan SIGKILLs a role mid-work and restarts it, while (in WAL mode) a
 * long-lived reader pins checkpoints. Beside them, a process of the store opens a new
 * SQLite file whose write lock another process holds, made in the journal mode the store
 * does not use (the open window). Must hold: every role has operations acknowledged,
 * not only refused; every acknowledged operation of every process survives; an append acknowledged before another was
 * invoked has the smaller id; ids strictly increase in each session; every returned id
 * is the committed row's; no process sees an error other than a typed busy refusal
 * (`BusyDeadlineError`, after at least its busy deadline, changing nothing, counted per
 * role); the open window's process opens the file and writes, or refuses typed after
 * its busy deadline; no process exits 0 without finishing its plan; integrity and the store's
 * invariants hold and recovery reads the same twice. Reports p50/p99 append latency
 * and refusals per role, and the WAL size over time (SVG plots beside the evidence).
 * Every leg.
 *
 * @param options Target, leg, span, kills, bounds.
 * @returns The test definitions to register with `Deno.test`.
 * @example
 * ```ts
 * import { concurrentWritersCell } from "./cell.ts";
 * const target = new URL("../reference_target.ts", import.meta.url);
 * for (const test of await concurrentWritersCell({ target, maxRefusals: 0 })) Deno.test(test);
 * ```
 */
export function concurrentWritersCell(
  options: ConcurrentWritersOptions,
): Promise<Deno.TestDefinition[]> {
  const span = spanOf(options.span);
  return defineCell({
    id: 6,
    run: (ctx, t) => concurrentRun({ ctx, t, options }, span),
  }, options);
}

/** One run: the helpers and roles started, killed and restarted, finished, then judged. */
async function concurrentRun(
  cell: { ctx: CellRun; t: Deno.TestContext; options: ConcurrentWritersOptions },
  span: number,
): Promise<void> {
  const { ctx, t, options } = cell;
  startTallies(ctx);
  const started = performance.now();
  const deadlineAt = started + (options.deadlineMs ?? 120_000);
  const db = ctx.run.store("store");
  // The file exists, in the leg's mode, before the reader and the roles race to it.
  await (await openTargetStore(ctx.target, db)).close();
  // Beside the roles, on a file of its own: a process of the store opening a new file.
  const opening = startOpenWindow(ctx, db, options.busyWindowMs ?? 1500);
  opening.catch(() => {}); // awaited after the roles: a failure is reported there
  const walPath = `${db}-wal`;
  const wal: [number, number][] = [];
  const sampler = setInterval(() => {
    wal.push([Math.round(performance.now() - started), fileSize(walPath)]);
  }, 50);
  try {
    const helpers = await startHelpers(ctx, db, options);
    const roles: RolesRun = { db, runs: spawnRoles(ctx, db, span), started, deadlineAt };
    const window = await startRoles(ctx, roles.runs, helpers);
    await killAndRestart(ctx, roles, options.kills ?? 2);
    await finishRoles(ctx, roles, helpers);
    clearInterval(sampler);
    wal.push([Math.round(performance.now() - started), fileSize(walPath)]);
    const openWindow = await opening;
    await checkConcurrentRun(ctx, t, {
      db,
      runs: roles.runs,
      wal,
      bounds: options,
      window,
      ...(openWindow ? { openWindow } : {}),
    });
  } finally {
    clearInterval(sampler);
    await opening.catch(() => {});
  }
}

/** Starts the open window on an SQLite store (noting why not otherwise). */
function startOpenWindow(
  ctx: CellRun,
  db: string,
  windowMs: number,
): Promise<OpenWindow | undefined> {
  const mode = windowMs > 0 ? sqliteModeOf(db, "before the open window") : undefined;
  if (mode === undefined) {
    ctx.note("openWindow", windowMs > 0 ? NOT_SQLITE : "off");
    return Promise.resolve(undefined);
  }
  return openWindow(ctx, mode, windowMs).then((window) => {
    ctx.note("openWindow", {
      holderMode: window.holderMode,
      heldMs: Math.round(window.heldMs),
      opener: window.result.k === "opened"
        ? `opened in ${Math.round(window.result.ms)} ms`
        : `${window.result.name}: ${window.result.message}`,
    });
    return window;
  });
}
