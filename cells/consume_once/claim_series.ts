// The claim's worst case (cell 2): a claim that reads the handoff's state in one statement
// or transaction and writes it in another passes a race whenever the claimants happen not
// to interleave. For k = 1, 2, … every claimant is stopped (SIGSTOP, through the LD_PRELOAD
// recorder) just before the k-th lock call inside its claim; once all of them are stopped
// (the interleave is checked, not hoped for), all are continued at once. At the k that falls
// between a check and its write, every claimant has read before any writes: still exactly
// one may win. The walk ends when the claims complete before their k-th lock call.
import { countReady, releaseBarrier } from "../../harness/barrier.ts";
import { type Child, classifyExit, reapAll } from "../../harness/child.ts";
import { HarnessError } from "../../harness/harness_error.ts";
import { waitFor } from "../../harness/wait_for.ts";
import { exists } from "../../internal/fs.ts";
import { recorderEnv } from "../../recorder/record.ts";
import type { CellRun } from "../engine/cell.ts";
import { holdsLockIn, processStopped } from "../moves/kill.ts";
import { OP_MARKS_ENV, recorder } from "../moves/kill_series.ts";
import { openTargetStore } from "../contract/target.ts";
import { CLAIMANT } from "./_children.ts";

/** Claimants of each stop: enough to show a double claim, few enough to walk every call. */
const CLAIMANTS = 3;
/** How long every claimant may take to reach its stop; one blocked by another's lock may not. */
const REACH_MS = 2_000;
const DEADLINE_MS = 60_000;
const SESSION = "claim-stop";

interface Stop {
  /** Every claimant finished before its k-th lock call: the walk is over. */
  done: boolean;
  /** Every claimant was stopped at once. */
  allStopped: boolean;
  violation?: string;
}

async function stopAt(ctx: CellRun, k: number, library: string): Promise<Stop> {
  const dir = ctx.run.file(`claim-stop-${k}`);
  await Deno.mkdir(`${dir}/db`, { recursive: true });
  const db = `${dir}/db/store.db`;
  const setup = await openTargetStore(ctx.target, db);
  try {
    await setup.createSession(SESSION);
    if (!await setup.requestHandoff!(SESSION, "cell2")) {
      throw new Error(`requestHandoff("${SESSION}") did not park a session without a handoff`);
    }
  } finally {
    await setup.close();
  }
  const go = `${dir}/go`;
  const children: Child[] = [];
  const stopFile = (i: number) => `${dir}/c${i}.stopped`;
  try {
    for (let i = 0; i < CLAIMANTS; i++) {
      const marks = `${dir}/c${i}.marks.jsonl`;
      const env = {
        ...recorderEnv({
          library,
          watched: `${dir}/db`,
          log: `${dir}/c${i}.fsrec.log`,
          mark: marks,
          stopAt: k,
          stopFile: stopFile(i),
          armAfterMarks: 1,
        }),
        [OP_MARKS_ENV]: marks,
      };
      children.push(ctx.spawn(CLAIMANT, [db, dir, `c${i}`, go, SESSION], { env }));
    }
    await waitFor(() => countReady(dir) >= CLAIMANTS, {
      what: `claim stop ${k}: ${CLAIMANTS} claimants ready`,
      deadlineMs: DEADLINE_MS,
      children,
    });
    releaseBarrier(go);
    const settled = (child: Child, i: number) =>
      child.exited !== undefined || (exists(stopFile(i)) && processStopped(child.pid) !== false);
    // One may wait for a lock another holds while stopped: then this k interleaves only
    // some, and the rest are given a grace. While no stopped claimant holds a lock, nobody
    // is blocked, and the others are waited for as long as they take (a loaded machine).
    const blocked = () =>
      children.some((child, i) =>
        child.exited === undefined && exists(stopFile(i)) &&
        holdsLockIn(child.pid, `${dir}/db`) !== false
      );
    let since: number | undefined;
    await waitFor(() => {
      if (children.every(settled)) return true;
      if (!blocked()) {
        since = undefined;
        return false;
      }
      since ??= performance.now();
      return performance.now() - since > REACH_MS;
    }, {
      what: `claim stop ${k}: every claimant to stop before lock call ${k} or finish`,
      deadlineMs: DEADLINE_MS,
      intervalMs: 2,
    });
    const stopped = children.filter((child, i) =>
      child.exited === undefined && exists(stopFile(i))
    );
    const done = children.every((child, i) => child.exited !== undefined && !exists(stopFile(i)));
    // Continued again while they run: one that was blocked may reach its stop only after
    // the others went on, and must not be left stopped holding a lock.
    const going = () => {
      for (const child of children) child.signal("SIGCONT");
      return children.every((child) => child.exited !== undefined);
    };
    await waitFor(going, {
      what: `claim stop ${k}: every claimant to finish after the stop`,
      deadlineMs: DEADLINE_MS,
      observed: () => children.map((child) => child.describe()).join("; "),
    });
    const exits = children.map((child) => classifyExit(child.exited!));
    const crashed = children.filter((_, i) =>
      exits[i]!.kind !== "won" && exits[i]!.kind !== "lost"
    );
    if (crashed.length) {
      throw new Error(
        `claim stop ${k}: claimant(s) crashed: ${crashed.map((c) => c.describe()).join("; ")}`,
      );
    }
    const won = exits.filter((e) => e.kind === "won").length;
    ctx.observeLeg(db, `claim stop ${k}`, true);
    const check = await openTargetStore(ctx.target, db);
    let state: string | null;
    try {
      state = await check.getHandoffState!(SESSION);
    } finally {
      await check.close();
    }
    const allStopped = stopped.length === CLAIMANTS;
    const problems = [
      ...(won === 1 ? [] : [`${won} of ${CLAIMANTS} claimants won the handoff`]),
      ...(state === "running" ? [] : [`the handoff is ${state}, not running`]),
    ];
    return {
      done,
      allStopped,
      ...(problems.length
        ? {
          violation: `${
            problems.join("; ")
          } (${stopped.length} of ${CLAIMANTS} stopped before lock call ${k} and continued at once)`,
        }
        : {}),
    };
  } finally {
    await reapAll(children);
  }
}

/**
 * Walks the lock calls of the claim with every claimant stopped at each, continued at once,
 * and fails a step on more or fewer than one winner. Checks that the worst case happened:
 * at some stop every claimant was stopped at once (else a `HarnessError`: nothing judged).
 */
export async function claimSeries(
  ctx: CellRun,
  t: Deno.TestContext,
  maxStops = 60,
): Promise<void> {
  const lib = await recorder();
  if (!lib.path) {
    ctx.note("claimSeries", `not run: ${lib.reason}`);
    console.error(`  claim series not run: ${lib.reason}`);
    return;
  }
  let stops = 0;
  let allStopped = 0;
  for (let k = 1; k <= maxStops; k++) {
    const stop = await stopAt(ctx, k, lib.path);
    if (stop.done) break;
    stops++;
    if (stop.allStopped) allStopped++;
    if (stop.violation) {
      await t.step(`claimHandoff: every claimant stopped at lock call ${k}, then continued`, () => {
        throw new Error(stop.violation);
      });
      return;
    }
  }
  ctx.note("claimSeries", { claimants: CLAIMANTS, stops, everyClaimantStopped: allStopped });
  console.log(
    `  claim series: ${stops} stop(s) in the claim, every claimant stopped at ${allStopped}`,
  );
  await t.step("claimHandoff: every claimant stopped inside its claim at once", () => {
    if (allStopped === 0) {
      throw new HarnessError(
        `at no stop of ${stops} were all ${CLAIMANTS} claimants stopped at once: the worst case never happened, nothing was judged`,
      );
    }
  });
}
