// The races' worst case: a store that reads the session in one statement or transaction
// and writes it in another (creates it, ends it, reopens it) passes a race whenever the
// racers happen not to interleave. For k = 1, 2, … every racer is stopped (SIGSTOP, through
// the LD_PRELOAD recorder) just before the k-th lock call inside its call; once all are
// stopped, all are continued at once. At the k between a check and its write, every racer
// has read before any writes: still every one must return cleanly, and the outcome be one
// an atomic store gives (one session with every message; one `true`).
import { countReady } from "../../harness/barrier.ts";
import type { CellRun } from "../engine/cell.ts";
import { seriesRecorder } from "../moves/kill_series.ts";
import { stopBeforeLockCall, type StopResult, walkLockStops } from "../moves/stop_at_lock.ts";
import { judgeRace, prepareRace, type RacedOp, racerName } from "./_race_state.ts";
import { ENSURER } from "./_children.ts";

/** Racers of each stop: enough to show a double write, few enough to walk every call. */
const RACERS = 3;

/** One stop: every racer, released together, stopped before lock call k, then all continued. */
function stopAt(ctx: CellRun, op: RacedOp, k: number, library: string): Promise<StopResult> {
  const dir = ctx.run.file(`${op}-stop-${k}`);
  const label = `${op} stop ${k}`;
  const session = `${op}-stopped`;
  return stopBeforeLockCall(ctx, {
    k,
    label,
    dir,
    library,
    setup: (db) => prepareRace(ctx.target, db, { op, session }),
    actors: {
      what: "every racer",
      count: RACERS,
      prefix: (i) => `e${i}.`,
      spawn: (env, i) =>
        ctx.spawn(ENSURER, [`${dir}/db/store.db`, dir, racerName(i), `${dir}/go`, session, op], {
          env,
        }),
      go: {
        barrier: `${dir}/go`,
        ready: () => countReady(dir) >= RACERS,
        what: `${RACERS} racers ready`,
      },
      // Judged as the clause: a racer that threw fails the stop's step.
      exitedWell: () => true,
    },
    async judge({ db, actors, stopped }) {
      const judged = await judgeRace(ctx.target, { op, db, session, racers: actors });
      const problems = [
        ...(judged.failed.length
          ? [`${judged.failed.length} racer(s) failed: ${judged.failed.join("; ")}`]
          : []),
        ...judged.outcome,
        ...judged.soundness,
      ];
      return {
        raced: stopped === RACERS,
        ...(problems.length
          ? {
            violation: `${
              problems.join("; ")
            } (${stopped} of ${RACERS} stopped before lock call ${k} and continued at once)`,
          }
          : {}),
      };
    },
    completed: (db) => ctx.observeLeg(db, label, true),
  });
}

/**
 * Walks the lock calls of `<op>Session` with every racer stopped at each, continued at
 * once, and fails a step on a racer that failed or an outcome no atomic store gives.
 * Checks that at some stop every racer was stopped at once (else a `HarnessError`).
 *
 * @param ctx The cell's run.
 * @param t The test context the steps are taken in.
 * @param op The raced call.
 * @example
 * ```ts ignore
 * import { racerSeries } from "./ensure_series.ts";
 * await racerSeries(ctx, t, "ensure");
 * ```
 */
export async function racerSeries(ctx: CellRun, t: Deno.TestContext, op: RacedOp): Promise<void> {
  const method = `${op}Session`;
  const library = await seriesRecorder(`${op} series`);
  await walkLockStops(ctx, t, {
    names: {
      key: `${op}Series`,
      brokenStep: (k) => `${method}: every racer stopped at lock call ${k}, then continued`,
      interleaveStep: `${method}: every racer stopped inside its call at once`,
      neverInterleaved: (stops) =>
        `at no stop of ${stops} were all ${RACERS} racers stopped at once: the worst case never happened, nothing was judged`,
      note: ({ stops, raced }) => ({ racers: RACERS, stops, everyRacerStopped: raced }),
      log: ({ stops, raced }) =>
        `  ${op} series: ${stops} stop(s) in ${method}, every racer stopped at ${raced}`,
    },
    stopAt: (k) => stopAt(ctx, op, k, library),
    maxStops: 60,
  });
}
