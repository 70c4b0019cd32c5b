// The claim's worst case (cell 2): a claim that reads the handoff's state in one statement
// or transaction and writes it in another passes a race whenever the claimants happen not
// to interleave. For k = 1, 2, … every claimant is stopped (SIGSTOP, through the LD_PRELOAD
// recorder) just before the k-th lock call inside its claim; once all of them are stopped
// (the interleave is checked, not hoped for), all are continued at once. At the k that falls
// between a check and its write, every claimant has read before any writes: still exactly
// one may win. The walk ends when the claims complete before their k-th lock call.
import { countReady } from "../../harness/barrier.ts";
import { type Child, classifyExit } from "../../harness/child.ts";
import type { CellRun } from "../engine/cell.ts";
import { seriesRecorder } from "../moves/kill_series.ts";
import { stopBeforeLockCall, type StopResult, walkLockStops } from "../moves/stop_at_lock.ts";
import { openTargetStore } from "../contract/target.ts";
import { CLAIMANT } from "./_children.ts";

/** Claimants of each stop: enough to show a double claim, few enough to walk every call. */
const CLAIMANTS = 3;
const SESSION = "claim-stop";

/** Parks the session's handoff on `db`. */
async function park(ctx: CellRun, db: string): Promise<void> {
  const setup = await openTargetStore(ctx.target, db);
  try {
    await setup.createSession(SESSION);
    if (!await setup.requestHandoff!(SESSION, "cell2")) {
      throw new Error(`requestHandoff("${SESSION}") did not park a session without a handoff`);
    }
  } finally {
    await setup.close();
  }
}

/** Exactly one claimant won, and the handoff is `running`; else why not. */
async function judgeClaims(
  ctx: CellRun,
  stop: { k: number; db: string; actors: readonly Child[]; stopped: number },
): Promise<{ raced: boolean; violation?: string }> {
  const won = stop.actors.filter((child) => classifyExit(child.exited!).kind === "won").length;
  const check = await openTargetStore(ctx.target, stop.db);
  let state: string | null;
  try {
    state = await check.getHandoffState!(SESSION);
  } finally {
    await check.close();
  }
  const problems = [
    ...(won === 1 ? [] : [`${won} of ${CLAIMANTS} claimants won the handoff`]),
    ...(state === "running" ? [] : [`the handoff is ${state}, not running`]),
  ];
  return {
    raced: stop.stopped === CLAIMANTS,
    ...(problems.length
      ? {
        violation: `${
          problems.join("; ")
        } (${stop.stopped} of ${CLAIMANTS} stopped before lock call ${stop.k} and continued at once)`,
      }
      : {}),
  };
}

/**
 * One stop: every claimant, released together, stopped before lock call k of its claim
 * (one may wait for a lock another holds while stopped: then this k interleaves only some),
 * then all continued at once.
 */
function stopAt(ctx: CellRun, k: number, library: string): Promise<StopResult> {
  const dir = ctx.run.file(`claim-stop-${k}`);
  const label = `claim stop ${k}`;
  return stopBeforeLockCall(ctx, {
    k,
    label,
    dir,
    library,
    setup: (db) => park(ctx, db),
    actors: {
      what: "every claimant",
      count: CLAIMANTS,
      prefix: (i) => `c${i}.`,
      spawn: (env, i) =>
        ctx.spawn(CLAIMANT, [`${dir}/db/store.db`, dir, `c${i}`, `${dir}/go`, SESSION], { env }),
      go: {
        barrier: `${dir}/go`,
        ready: () => countReady(dir) >= CLAIMANTS,
        what: `${CLAIMANTS} claimants ready`,
      },
      exitedWell: (status) => ["won", "lost"].includes(classifyExit(status).kind),
      failure: "claimant(s) crashed",
    },
    judge: ({ db, actors, stopped }) => judgeClaims(ctx, { k, db, actors, stopped }),
    completed: (db) => ctx.observeLeg(db, label, true),
  });
}

/**
 * Walks the lock calls of the claim with every claimant stopped at each, continued at once,
 * and fails a step on more or fewer than one winner. Checks that the worst case happened:
 * at some stop every claimant was stopped at once (else a `HarnessError`: nothing judged).
 *
 * @param ctx The cell's run.
 * @param t The test context the steps are taken in.
 * @example
 * ```ts ignore
 * import { claimSeries } from "./claim_series.ts";
 * await claimSeries(ctx, t);
 * ```
 */
export async function claimSeries(ctx: CellRun, t: Deno.TestContext): Promise<void> {
  const library = await seriesRecorder("claim series");
  await walkLockStops(ctx, t, {
    names: {
      key: "claimSeries",
      brokenStep: (k) => `claimHandoff: every claimant stopped at lock call ${k}, then continued`,
      interleaveStep: "claimHandoff: every claimant stopped inside its claim at once",
      neverInterleaved: (stops) =>
        `at no stop of ${stops} were all ${CLAIMANTS} claimants stopped at once: the worst case never happened, nothing was judged`,
      note: ({ stops, raced }) => ({ claimants: CLAIMANTS, stops, everyClaimantStopped: raced }),
      log: ({ stops, raced }) =>
        `  claim series: ${stops} stop(s) in the claim, every claimant stopped at ${raced}`,
    },
    stopAt: (k) => stopAt(ctx, k, library),
    maxStops: 60,
  });
}
