// The ensure race's worst case: a store that reads the session in one statement or
// transaction and creates it in another passes a race whenever the racers happen not to
// interleave. For k = 1, 2, … every racer is stopped (SIGSTOP, through the LD_PRELOAD
// recorder) just before the k-th lock call inside its `ensureSession`; once all are stopped,
// all are continued at once. At the k between a check and its write, every racer has read
// before any writes: still every one must return without error, and one session hold all.
import { countReady } from "../../harness/barrier.ts";
import type { Child } from "../../harness/child.ts";
import type { CellRun } from "../engine/cell.ts";
import { recorder } from "../moves/kill_series.ts";
import { stopBeforeLockCall, type StopResult, walkLockStops } from "../moves/stop_at_lock.ts";
import { openTargetStore } from "../contract/target.ts";
import { ENSURER } from "./_children.ts";

/** Racers of each stop: enough to show a double create, few enough to walk every call. */
const RACERS = 3;
const SESSION = "ensure-stop";

/** Every racer exited 0 and the session holds each racer's message once; else why not. */
async function judgeEnsures(
  ctx: CellRun,
  stop: { k: number; db: string; actors: readonly Child[]; stopped: number },
): Promise<{ raced: boolean; violation?: string }> {
  const failed = stop.actors.filter((child) => child.exited!.code !== 0 || child.exited!.signal);
  const check = await openTargetStore(ctx.target, stop.db);
  let rows: (string | null)[];
  try {
    rows = (await check.getMessages(SESSION)).map((row) => row.content);
  } finally {
    await check.close();
  }
  const missing = stop.actors.map((_, i) => `e${i}`).filter((name) =>
    rows.filter((r) => r === name).length !== 1
  );
  const problems = [
    ...(failed.length
      ? [`${failed.length} racer(s) failed: ${failed.map((c) => c.describe()).join("; ")}`]
      : []),
    ...(missing.length ? [`messages not there once: ${missing.join(", ")}`] : []),
  ];
  return {
    raced: stop.stopped === RACERS,
    ...(problems.length
      ? {
        violation: `${
          problems.join("; ")
        } (${stop.stopped} of ${RACERS} stopped before lock call ${stop.k} and continued at once)`,
      }
      : {}),
  };
}

/** One stop: every racer, released together, stopped before lock call k, then all continued. */
function stopAt(ctx: CellRun, k: number, library: string): Promise<StopResult> {
  const dir = ctx.run.file(`ensure-stop-${k}`);
  const label = `ensure stop ${k}`;
  return stopBeforeLockCall(ctx, {
    k,
    label,
    dir,
    library,
    setup: () => Promise.resolve(),
    actors: {
      what: "every racer",
      count: RACERS,
      prefix: (i) => `e${i}.`,
      spawn: (env, i) =>
        ctx.spawn(ENSURER, [`${dir}/db/store.db`, dir, `e${i}`, `${dir}/go`, SESSION], { env }),
      go: {
        barrier: `${dir}/go`,
        ready: () => countReady(dir) >= RACERS,
        what: `${RACERS} racers ready`,
      },
      // Judged as the clause: a racer that threw fails the stop's step.
      exitedWell: () => true,
    },
    judge: ({ db, actors, stopped }) => judgeEnsures(ctx, { k, db, actors, stopped }),
    completed: (db) => ctx.observeLeg(db, label, true),
  });
}

/**
 * Walks the lock calls of `ensureSession` with every racer stopped at each, continued at
 * once, and fails a step on a racer that threw or a message not there once. Checks that at
 * some stop every racer was stopped at once (else a `HarnessError`: nothing judged).
 *
 * @param ctx The cell's run.
 * @param t The test context the steps are taken in.
 * @example
 * ```ts ignore
 * import { ensureSeries } from "./ensure_series.ts";
 * await ensureSeries(ctx, t);
 * ```
 */
export async function ensureSeries(ctx: CellRun, t: Deno.TestContext): Promise<void> {
  const lib = await recorder();
  if (!lib.path) {
    ctx.note("ensureSeries", `not run: ${lib.reason}`);
    console.error(`  ensure series not run: ${lib.reason}`);
    return;
  }
  await walkLockStops(ctx, t, {
    names: {
      key: "ensureSeries",
      brokenStep: (k) => `ensureSession: every racer stopped at lock call ${k}, then continued`,
      interleaveStep: "ensureSession: every racer stopped inside its ensure at once",
      neverInterleaved: (stops) =>
        `at no stop of ${stops} were all ${RACERS} racers stopped at once: the worst case never happened, nothing was judged`,
      note: ({ stops, raced }) => ({ racers: RACERS, stops, everyRacerStopped: raced }),
      log: ({ stops, raced }) =>
        `  ensure series: ${stops} stop(s) in the ensure, every racer stopped at ${raced}`,
    },
    stopAt: (k) => stopAt(ctx, k, lib.path!),
    maxStops: 60,
  });
}
