// Stops inside fenced operations (cell 7): a stale owner that checked its fence in one read
// and writes in a separate transaction passes every stop made before it calls the operation.
// For k = 1, 2, … an actor child becomes the owner and is stopped (SIGSTOP, through the
// LD_PRELOAD recorder) just before the k-th lock call inside its fenced write; during the
// stop a new owner (a child, its store already open) takes over (the lock's holder names a
// dead process, so no lease need run out) and says whether the actor's write had landed;
// the actor is continued and finishes; then the new owner acts. A write acknowledged after
// a takeover that committed while the actor was stopped, before its write landed, was based
// on a check made before the stop: it must have been refused and left nothing. The walk
// ends when the operation completes before its k-th lock call.
import { releaseBarrier } from "../harness/barrier.ts";
import { type Child, reapAll } from "../harness/child.ts";
import { HarnessError } from "../harness/harness_error.ts";
import { WaitError, waitFor } from "../harness/wait_for.ts";
import { exists } from "../internal/fs.ts";
import type { CellRun } from "./_cell.ts";
import { processStopped } from "./_kill.ts";
import { recorder, seriesEnv } from "./_kill_series.ts";
import { type Answer, describeAnswer, verdict } from "./_typed.ts";
import { openTargetStore } from "./target.ts";

/** An owner whose fenced write the series walks (cell 7's `FencedOwner`). */
export type StoppedOwner = "compressionLock" | "handoffClaim" | "outboxAttempt";

/** The fenced write each owner makes. */
export const FENCED_WRITE: Record<StoppedOwner, string> = {
  compressionLock: "publishCompressionChild",
  handoffClaim: "completeHandoff",
  outboxAttempt: "markDelivered",
};

/** How long the new owner may take while the actor is stopped; past it the actor goes on. */
const GRACE_MS = 1_000;
const DEADLINE_MS = 60_000;
const SESSION = "fenced-stop";

interface Took {
  took: unknown;
  landed: boolean;
  acted?: Answer | true;
}

function readJson<T>(path: string): T | undefined {
  try {
    const text = Deno.readTextFileSync(path);
    return text.endsWith("\n") ? JSON.parse(text) as T : undefined;
  } catch {
    return undefined;
  }
}

/** What the file shows once both are done: the stale write's trace and the new owner's work. */
async function finalState(ctx: CellRun, db: string, owner: StoppedOwner, id?: string) {
  const store = await openTargetStore(ctx.target, db);
  try {
    if (owner === "compressionLock") {
      const sessions = await store.listSessions!();
      const children = sessions.filter((s) => s.parentSessionId === SESSION).map((s) => s.id);
      return { staleTrace: children.includes("child-stale"), state: children.join(",") };
    }
    if (owner === "handoffClaim") {
      const state = await store.getHandoffState!(SESSION);
      return { staleTrace: false, state: String(state) };
    }
    const state = (await store.getObligation!(id!))?.state;
    return { staleTrace: state === "delivered", state: String(state) };
  } finally {
    await store.close();
  }
}

/** One stop: the outcome, or why no order of an atomic fenced write gives it. */
interface StopResult {
  stopped: boolean;
  /** The new owner took over while the actor was stopped, before its write landed. */
  raced: boolean;
  violation?: string;
}

async function stopAt(
  ctx: CellRun,
  owner: StoppedOwner,
  k: number,
  library: string,
): Promise<StopResult> {
  const dir = ctx.run.file(`fence-${owner}-${k}`);
  await Deno.mkdir(`${dir}/db`, { recursive: true });
  const db = `${dir}/db/store.db`;
  const setup = await openTargetStore(ctx.target, db);
  try {
    await setup.createSession(SESSION);
    await setup.appendMessage(SESSION, { role: "user", content: "work before the takeover" });
    if (owner === "handoffClaim") await setup.requestHandoff!(SESSION, "cell7");
  } finally {
    await setup.close();
  }
  const go = `${dir}/go`;
  const out = `${dir}/out.json`;
  const children: Child[] = [];
  const spawn = (role: "actor" | "owner", env?: Record<string, string>) => {
    const args = [db, owner, role, role === "actor" ? out : `${out}.owner`, go, SESSION];
    const child = ctx.spawn("fence_child.ts", args, env ? { env } : {});
    children.push(child);
    return child;
  };
  const label = `${FENCED_WRITE[owner]} stopped before lock call ${k}`;
  try {
    const fresh = spawn("owner");
    await waitFor(() => exists(`${out}.owner.ready`), {
      what: `${label}: the new owner to open the store`,
      deadlineMs: DEADLINE_MS,
      children: [fresh],
    });
    const stopFile = `${dir}/stopped`;
    const actor = spawn(
      "actor",
      seriesEnv(library, dir, { stopAt: k, stopFile, armAfterMarks: 1 }),
    );
    await waitFor(() => actor.exited !== undefined || exists(stopFile), {
      what: `${label}: the owner to stop there or finish`,
      deadlineMs: DEADLINE_MS,
      children: [fresh],
    });
    if (actor.exited === undefined) {
      await waitFor(() => processStopped(actor.pid) !== false, {
        what: `${label}: the owner (pid ${actor.pid}) to be stopped (state T)`,
        deadlineMs: DEADLINE_MS,
        intervalMs: 1,
      });
    }
    const acquired = readJson<{ at: number; id?: string }>(`${out}.acquired`);
    if (actor.exited !== undefined) {
      // The write completed before its k-th lock call: every lock call was walked.
      if (actor.exited.code !== 0) {
        throw new Error(`${label}: the owner failed: ${actor.describe()}`);
      }
      return { stopped: false, raced: false };
    }
    if (!acquired) throw new HarnessError(`${label}: the owner stopped before it journaled`);
    // What the new owner needs to take over (the attempt's id and fence), beside its files.
    Deno.writeTextFileSync(`${out}.owner.acquired`, JSON.stringify(acquired) + "\n");
    releaseBarrier(go);
    let tookInTime = false;
    try {
      await waitFor(() => exists(`${out}.owner.took`), {
        what: `${label}: the new owner to take over while the owner is stopped`,
        deadlineMs: GRACE_MS,
        intervalMs: 2,
      });
      tookInTime = true;
    } catch (error) {
      // Blocked by a lock the stopped owner holds: it takes over once the owner goes on.
      if (!(error instanceof WaitError)) throw error;
    }
    actor.signal("SIGCONT");
    await waitFor(() => actor.exited !== undefined, {
      what: `${label}: the resumed owner to finish its write`,
      deadlineMs: DEADLINE_MS,
      observed: () => actor.describe(),
    });
    releaseBarrier(`${go}.act`);
    await waitFor(() => fresh.exited !== undefined, {
      what: `${label}: the new owner to act`,
      deadlineMs: DEADLINE_MS,
      observed: () => fresh.describe(),
    });
    for (const child of [actor, fresh]) {
      if (child.exited!.code !== 0) {
        throw new Error(`${label}: a child failed: ${child.describe()}`);
      }
    }
    const stale = readJson<Answer>(out);
    const took = readJson<Took>(`${out}.owner`);
    if (!stale || !took) {
      throw new Error(`${label}: the children did not report (${stale}, ${took})`);
    }
    ctx.observeLeg(db, label, true);
    const final = await finalState(ctx, db, owner, acquired.id);
    const raced = tookInTime && took.took === true && !took.landed;
    if (!raced) return { stopped: true, raced };
    // The takeover committed while the owner was stopped, before its write landed: an
    // atomic fenced write checks the fence inside its own transaction, after that.
    const problems: string[] = [];
    if (verdict(stale) === "accepted") {
      problems.push(`the stale ${FENCED_WRITE[owner]} was acknowledged (${describeAnswer(stale)})`);
    }
    if (final.staleTrace) problems.push(`its write is durable (${final.state})`);
    const acted = took.acted;
    if (acted !== true && acted && verdict(acted) !== "accepted") {
      problems.push(`the new owner's work was refused afterwards (${describeAnswer(acted)})`);
    }
    return {
      stopped: true,
      raced,
      ...(problems.length
        ? {
          violation: `${
            problems.join("; ")
          }, although the new owner took over while the owner was stopped, before its write landed (the fence was checked before the stop); the file shows ${final.state}`,
        }
        : {}),
    };
  } finally {
    await reapAll(children);
  }
}

/**
 * Walks the lock calls of `owner`'s fenced write, a takeover at each stop, and fails a step
 * on a stale write that went through. Checks that the interleave happened: at least one
 * takeover committed while the owner was stopped (else a `HarnessError`: nothing judged).
 */
export async function fenceSeries(
  ctx: CellRun,
  t: Deno.TestContext,
  owner: StoppedOwner,
  maxStops = 100,
): Promise<void> {
  const lib = await recorder();
  const key = `fenceSeries.${owner}`;
  if (!lib.path) {
    ctx.note(key, `not run: ${lib.reason}`);
    console.error(`  fence series for ${owner} not run: ${lib.reason}`);
    return;
  }
  let stops = 0;
  let raced = 0;
  let completed = false;
  for (let k = 1; k <= maxStops; k++) {
    const result = await stopAt(ctx, owner, k, lib.path);
    if (!result.stopped) {
      completed = true;
      break;
    }
    stops++;
    if (result.raced) raced++;
    if (result.violation) {
      await t.step(`${owner} · stopped inside ${FENCED_WRITE[owner]} at lock call ${k}`, () => {
        throw new Error(result.violation);
      });
      return;
    }
  }
  ctx.note(key, { stops, takenOverWhileStopped: raced, complete: completed });
  console.log(
    `  fence series: ${stops} stop(s) inside ${
      FENCED_WRITE[owner]
    }, taken over while stopped at ${raced}`,
  );
  await t.step(`${owner} · stops inside ${FENCED_WRITE[owner]}: a takeover landed in one`, () => {
    if (raced === 0) {
      throw new HarnessError(
        `no takeover committed while the owner was stopped inside ${
          FENCED_WRITE[owner]
        } (${stops} stops): the interleave never happened, nothing was judged`,
      );
    }
  });
}
