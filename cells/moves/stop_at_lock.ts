// Stop before a lock call: the move that catches a store checking a guard in one
// statement or transaction and writing in another, which passes every kill and every race
// that happens not to interleave. For k = 1, 2, … a stop is set up, its actor (or every
// actor at once) is stopped (SIGSTOP, through the LD_PRELOAD recorder) just before the k-th
// lock call inside its operation, a competitor, its store already open, moves while it is
// stopped, the actor is continued and finishes, the competitor acts again, and the stop is
// judged against every order of an atomic store. The walk ends when the operation completes
// before its k-th lock call, fails a step on the first violation, and requires that the
// interleave happened at some stop (else nothing was judged: a `HarnessError`).
//
// A stopped process that holds no lock on the store's files blocks nobody: whoever must
// move meanwhile is waited for as long as it takes, so a loaded machine cannot skip the stop
// that judges. One that holds a lock may block them: they are given a grace, and move once
// it goes on. Used by the guarded writes' stops (cells 2, 3, 4, 7), cell 5's stops and cell
// 2's claim series. The race series (`race.ts`) stays apart: it judges whatever order its
// racer reached within a fixed grace, and requires no move to land.
import { releaseBarrier } from "../../harness/barrier.ts";
import { type Child, reapAll } from "../../harness/child.ts";
import { HarnessError } from "../../harness/harness_error.ts";
import { lockWaits, procText } from "../../harness/_proc.ts";
import { WaitError, waitFor } from "../../harness/wait_for.ts";
import { exists } from "../../internal/fs.ts";
import { recorderEnv } from "../../recorder/record.ts";
import type { CellRun } from "../engine/cell.ts";
import { holdsLockIn, processStopped, untilStopped } from "./kill.ts";
import { OP_MARKS_ENV } from "./kill_series.ts";
import { HELD_OUT_MS, heldOut, nameRefusedFileOf, refusalEnv, refusedFileOf } from "./_held_out.ts";

/** How long a competitor may take while a lock-holding actor is stopped; past it the actor goes on. */
const GRACE_MS = 1_000;
/** How long every actor may take to reach its stop while one stopped holding a lock may block it. */
const REACH_MS = 2_000;
const DEADLINE_MS = 60_000;

/** One stop: whether an actor stopped, whether the interleave happened, and what broke. */
export interface StopResult {
  /** An actor was stopped before the lock call (`false`: the operation completed first). */
  stopped: boolean;
  /** The interleave the walk needs happened (a move landed during the stop, every actor stopped). */
  raced: boolean;
  /** Why no order of an atomic store gives this outcome. */
  violation?: string;
  /** The store's answer when it refused the move that had to land during the stop. */
  refused?: string;
}

/** The processes stopped before lock call k. */
export interface StopActors {
  /** What the waits call them, e.g. `the actor`, `every claimant`. */
  what: string;
  /** How many (default 1). */
  count?: number;
  /** Its files' prefix in the stop's folder (default none: `<dir>/stopped`, `<dir>/fsrec.log`). */
  prefix?(i: number): string;
  /** Spawns actor `i` with `env`: the recorder stopping it before lock call k. */
  spawn(env: Record<string, string>, i: number): Child;
  /** A barrier they wait on once ready, released when `ready()`: they start together. */
  go?: { barrier: string; ready(): boolean; what: string };
  /** Whether actor `i`'s operation is done, as it reports it (default: it exited). */
  finished?(actor: Child, i: number): boolean;
  /** Whether an exit is a clean end (default code 0). */
  exitedWell?(status: Deno.CommandStatus): boolean;
  /** How a failed actor is named in the error (default `the actor failed`, after a stop `a child failed`). */
  failure?: string;
  /** Once stopped, throws when it stopped where it must not (before its operation). */
  checkStop?(): void;
}

/** The process that moves while the actors are stopped, and any bystander. */
export interface StopCompetitor {
  /** What the waits call it, e.g. `the new owner`. */
  what: string;
  /**
   * Spawns it first (and any bystander that must be ready too), its store opened; `env`
   * is for the competitor alone: the recorder noting a lock call it is refused, so that a
   * move held out by the stopped actor's lock is not waited for (see `refused`).
   */
  spawn(env: Record<string, string>): Child[];
  /** Whether each has opened its store. */
  ready(): boolean;
  /** Released once the actors are stopped; `<go>.act` once they finished; `<go>.done` once judged. */
  go: string;
  /** Whether it has made its move. */
  took(): boolean;
  /**
   * Whether its move was refused a lock a stopped actor holds (the grace need not run out);
   * default: the recorder `env` of `spawn` noted a refused lock call since its release.
   */
  refused?(): boolean;
  /** After its move, the actors still stopped (a bystander dies). */
  whileStopped?(): Promise<void>;
  /** Whether it has acted after the actors finished, as it reports it (default: it exited). */
  done?(mover: Child): boolean;
}

/** What the judge of one stop is given. */
export interface StopFacts {
  /** The stop's database. */
  db: string;
  /** The actors, finished. */
  actors: readonly Child[];
  /** How many of them were stopped before the lock call. */
  stopped: number;
  /** Whether the competitor made its move while they were stopped. */
  movedInTime: boolean;
}

/** One stop before lock call k: its setup, actors, competitor and judge. */
export interface LockStop {
  /** The lock call. */
  k: number;
  /** Names the stop in waits and errors, and in the leg's observation. */
  label: string;
  /** The stop's fresh folder: its database under `db/`, the recorder's files. */
  dir: string;
  /** The recorder's library. */
  library: string;
  /** Prepares the database (`<dir>/db/store.db`) before anyone opens it. */
  setup(db: string): Promise<void>;
  actors: StopActors;
  competitor?: StopCompetitor;
  /** Judges a stop once everyone finished: whether it interleaved, and what broke. */
  judge(facts: StopFacts): Promise<Omit<StopResult, "stopped">>;
  /** Called when the operation completed before lock call k, after its check. */
  completed?(db: string): void;
}

/** The process and, where /proc tells, every process it started (a store's worker). */
function tree(pid: number): number[] {
  const pids = [pid];
  for (let i = 0; i < pids.length; i++) {
    const children = procText(`/proc/${pids[i]}/task/${pids[i]}/children`);
    if (children) pids.push(...children.trim().split(/\s+/).filter(Boolean).map(Number));
  }
  return pids;
}

/** A stop's running state: its plan, processes and files. */
interface Stop {
  ctx: CellRun;
  plan: LockStop;
  db: string;
  actors: Child[];
  movers: Child[];
  stopFile(i: number): string;
  finished(i: number): boolean;
}

/** Spawns the competitor and any bystander, and waits until each opened its store. */
async function openCompetitor(stop: Stop, children: Child[]): Promise<void> {
  const competitor = stop.plan.competitor;
  if (!competitor) return;
  stop.movers.push(...competitor.spawn(refusalEnv(stop.plan.library, competitorAt(stop))));
  children.push(...stop.movers);
  await waitFor(() => competitor.ready(), {
    what: `${stop.plan.label}: ${competitor.what} to open the store`,
    deadlineMs: DEADLINE_MS,
    children: stop.movers,
  });
}

/** Spawns the actors under the recorder, armed to stop before lock call k; releases them. */
async function startActors(stop: Stop, children: Child[]): Promise<void> {
  const { plan } = stop;
  for (let i = 0; i < (plan.actors.count ?? 1); i++) {
    const prefix = `${plan.dir}/${plan.actors.prefix?.(i) ?? ""}`;
    const marks = `${prefix}marks.jsonl`;
    const env = {
      ...recorderEnv({
        library: plan.library,
        watched: `${plan.dir}/db`,
        log: `${prefix}fsrec.log`,
        mark: marks,
        stopAt: plan.k,
        stopFile: stop.stopFile(i),
        refusedFile: refusedFileOf(actorAt(stop, i)),
        armAfterMarks: 1,
      }),
      [OP_MARKS_ENV]: marks,
    };
    const actor = plan.actors.spawn(env, i);
    stop.actors.push(actor);
    children.push(actor);
  }
  const go = plan.actors.go;
  if (!go) return;
  await waitFor(go.ready, {
    what: `${plan.label}: ${go.what}`,
    deadlineMs: DEADLINE_MS,
    children: stop.actors,
  });
  releaseBarrier(go.barrier);
}

/** Whether actor `i` is stopped: its stop file made, and its process or its worker in state T. */
function atStop(stop: Stop, i: number): boolean {
  return exists(stop.stopFile(i)) &&
    tree(stop.actors[i]!.pid).some((pid) => processStopped(pid) !== false);
}

/**
 * Whether a stopped actor holds a lock on the store's files that can block another process,
 * a lock counting as free after `reads` reads miss it (one where the question is asked
 * again at once, three where the answer decides a wait).
 */
function blocking(stop: Stop, stopped: readonly number[], reads = 1): boolean {
  const dir = `${stop.plan.dir}/db`;
  return stopped.some((i) =>
    tree(stop.actors[i]!.pid).some((pid) => holdsLockIn(pid, dir, reads) !== false)
  );
}

/**
 * Waits until every actor finished or made its stop file; while one that made it holds a
 * lock, the others are given a grace only (they may be blocked). Then waits until each
 * that made its stop file is seen stopped (the recorder makes the file just before its
 * SIGSTOP). Returns the actors stopped, `undefined` when the operation completed first.
 */
async function reachStops(stop: Stop): Promise<number[] | undefined> {
  const { plan, actors } = stop;
  const indices = actors.map((_, i) => i);
  const stopping = () =>
    indices.filter((i) => actors[i]!.exited === undefined && exists(stop.stopFile(i)));
  const settled = (i: number) =>
    actors[i]!.exited !== undefined || stop.finished(i) || exists(stop.stopFile(i));
  let since: number | undefined;
  const heldOutAll = lockWaits(HELD_OUT_MS);
  const nameHeld = indices.map((i) => heldOut(nameRefusedFileOf(actorAt(stop, i))));
  await waitFor(() => {
    if (indices.every(settled)) return true;
    // The actors still on their way each refused a lock file or folder of the store's own,
    // which one stopped holds (no kernel table shows such a lock's holder).
    const unsettled = indices.filter((i) => !settled(i));
    if (stopping().length && unsettled.every((i) => nameHeld[i]!())) return true;
    if (!blocking(stop, stopping())) {
      since = undefined;
      return false;
    }
    since ??= performance.now();
    // The actors still on their way each wait in a lock call (a flock, an F_SETLKW) that
    // the stopped one holds: none reaches its stop before it goes on.
    if (heldOutAll(() => indices.filter((i) => !settled(i)).map((i) => tree(actors[i]!.pid)))) {
      return true;
    }
    return performance.now() - since > REACH_MS;
  }, {
    what: `${plan.label}: ${plan.actors.what} to stop there or finish`,
    deadlineMs: DEADLINE_MS,
    // Actors racing one another are watched closely: the grace runs from when one blocks.
    intervalMs: actors.length > 1 ? 2 : 20,
    children: stop.movers,
  });
  const stopped = stopping();
  const completed = indices.every((i) =>
    !exists(stop.stopFile(i)) && (actors[i]!.exited !== undefined || stop.finished(i))
  );
  if (completed) return undefined;
  await untilStopped(() => stopped.every((i) => atStop(stop, i)), {
    what: `${plan.label}: ${plan.actors.what} (pid ${
      stopped.map((i) => actors[i]!.pid).join(", ")
    }) or a worker`,
    deadlineMs: DEADLINE_MS,
  });
  return stopped;
}

/** Throws when an actor failed: not finished, or ended otherwise than cleanly. */
function checkActors(stop: Stop, when: "completed" | "after"): void {
  const { plan, actors } = stop;
  const well = plan.actors.exitedWell ?? ((status) => status.code === 0);
  const failed = actors.filter((actor, i) =>
    (when === "completed" && !stop.finished(i)) ||
    (actor.exited !== undefined && !well(actor.exited))
  );
  const movers = when === "after"
    ? stop.movers.slice(0, 1).filter((m) => m.exited !== undefined && m.exited.code !== 0)
    : [];
  if (!failed.length && !movers.length) return;
  const failure = plan.actors.failure ??
    (when === "completed" ? "the actor failed" : "a child failed");
  throw new Error(
    `${plan.label}: ${failure}: ${[...failed, ...movers].map((c) => c.describe()).join("; ")}`,
  );
}

/** Where actor `i`'s refusals are noted. */
function actorAt(stop: Stop, i: number): { dir: string; who: string } {
  return { dir: stop.plan.dir, who: `${stop.plan.actors.prefix?.(i) ?? ""}actor` };
}

/** Where the competitor's refusals are noted. */
function competitorAt(stop: Stop): { dir: string; who: string } {
  return { dir: stop.plan.dir, who: "competitor" };
}

/** Releases the competitor during the stop; whether it moved before the actors went on. */
async function moveWhileStopped(stop: Stop, stopped: readonly number[]): Promise<boolean> {
  const competitor = stop.plan.competitor;
  if (!competitor) return false;
  // Only a refusal of its move counts (none while it waited, holding no lock, for the go).
  const file = refusedFileOf(competitorAt(stop));
  const held = heldOut(file, competitor.refused);
  // A lock file or folder of the store's own is in no kernel table: its refusal says it.
  const heldByName = heldOut(nameRefusedFileOf(competitorAt(stop)));
  releaseBarrier(competitor.go);
  const blocks = blocking(stop, stopped, 3);
  try {
    await waitFor(() => competitor.took() || (blocks && held()) || heldByName(), {
      what: `${stop.plan.label}: ${competitor.what} to move while the actor is stopped`,
      deadlineMs: blocks ? GRACE_MS : DEADLINE_MS,
      intervalMs: 2,
      children: stop.movers.slice(0, 1),
    });
  } catch (error) {
    if (!(error instanceof WaitError) || !blocks) throw error;
  }
  const inTime = competitor.took();
  await competitor.whileStopped?.();
  return inTime;
}

/**
 * Continues every actor until each finished (one that was blocked may reach its stop only
 * after the others went on, and must not be left stopped holding a lock), then lets the
 * competitor act.
 */
async function finish(stop: Stop): Promise<void> {
  const { plan, actors } = stop;
  // An actor that reports its end stays alive after it: its early exit is a failure.
  const reported = plan.actors.finished !== undefined;
  await waitFor(() => {
    actors.forEach((actor, i) => stop.finished(i) || actor.signal("SIGCONT"));
    return actors.every((_, i) => stop.finished(i));
  }, {
    what: `${plan.label}: ${plan.actors.what} to finish after the stop`,
    deadlineMs: DEADLINE_MS,
    ...(reported ? { children: actors } : {}),
    observed: () => actors.map((actor) => actor.describe()).join("; "),
  });
  const competitor = plan.competitor;
  const mover = stop.movers[0];
  if (!competitor || !mover) return;
  releaseBarrier(`${competitor.go}.act`);
  const acted = competitor.done ?? ((m: Child) => m.exited !== undefined);
  await waitFor(() => acted(mover), {
    what: `${plan.label}: ${competitor.what} to act`,
    deadlineMs: DEADLINE_MS,
    ...(competitor.done ? { children: [mover] } : {}),
    observed: () => mover.describe(),
  });
}

/**
 * One stop before lock call `plan.k`: the database set up, the competitor's store opened,
 * the actors stopped there (or their operation completed first), the competitor's move
 * while they are stopped, the actors continued to their end, the competitor's act, and the
 * judge, while the children still hold what they took. Every child is reaped at the end,
 * stopped or not. Throws when a child failed.
 *
 * @param ctx The cell's run (the journal mode is observed once the stop is over).
 * @param plan The stop: setup, actors, competitor, judge.
 * @returns Whether an actor stopped, whether the interleave happened, what broke.
 * @example
 * ```ts ignore
 * import { stopBeforeLockCall } from "./stop_at_lock.ts";
 * const result = await stopBeforeLockCall(ctx, {
 *   k, label: `append stopped before lock call ${k}`, dir, library,
 *   setup: async (db) => {},
 *   actors: { what: "the actor", spawn: (env) => ctx.spawn(ACTOR, [db], { env }) },
 *   judge: async ({ stopped }) => ({ raced: stopped > 0 }),
 * });
 * ```
 */
export async function stopBeforeLockCall(ctx: CellRun, plan: LockStop): Promise<StopResult> {
  const db = `${plan.dir}/db/store.db`;
  await Deno.mkdir(`${plan.dir}/db`, { recursive: true });
  await plan.setup(db);
  const stopFile = (i: number) => `${plan.dir}/${plan.actors.prefix?.(i) ?? ""}stopped`;
  const stop: Stop = {
    ctx,
    plan,
    db,
    actors: [],
    movers: [],
    stopFile,
    finished: (i) => {
      const actor = stop.actors[i]!;
      return plan.actors.finished ? plan.actors.finished(actor, i) : actor.exited !== undefined;
    },
  };
  const children: Child[] = [];
  try {
    await openCompetitor(stop, children);
    await startActors(stop, children);
    const stopped = await reachStops(stop);
    if (!stopped) {
      // The operation completed before its k-th lock call: every lock call was walked.
      checkActors(stop, "completed");
      plan.completed?.(db);
      return { stopped: false, raced: false };
    }
    plan.actors.checkStop?.();
    const movedInTime = await moveWhileStopped(stop, stopped);
    await finish(stop);
    return await judged(stop, { db, actors: stop.actors, stopped: stopped.length, movedInTime });
  } finally {
    // Never leaves a child behind, stopped or not (SIGKILL ends a stopped process).
    await reapAll(children);
  }
}

/**
 * Judges a finished stop while its children live (what they took stays theirs), then lets
 * them end. The journal mode is observed before the judge reopens the file when every
 * child has already exited, else once they did.
 */
async function judged(stop: Stop, facts: StopFacts): Promise<StopResult> {
  const { ctx, plan } = stop;
  checkActors(stop, "after");
  const parties = [...stop.actors, ...stop.movers.slice(0, 1)];
  const observed = parties.every((child) => child.exited !== undefined);
  if (observed) ctx.observeLeg(stop.db, plan.label, true);
  const { raced, violation, refused } = await plan.judge(facts);
  if (plan.competitor) releaseBarrier(`${plan.competitor.go}.done`);
  await Promise.all(parties.map((child) => child.status));
  checkActors(stop, "after");
  if (!observed) ctx.observeLeg(stop.db, plan.label, true);
  return {
    stopped: true,
    raced,
    ...(violation ? { violation } : {}),
    ...(refused ? { refused } : {}),
  };
}

/** The counts of a walk, for its note and log line. */
export interface WalkCounts {
  /** Stops made inside the operation. */
  stops: number;
  /** Those at which the interleave happened. */
  raced: number;
  /** Whether the walk reached the operation's end. */
  complete: boolean;
}

/** What a walk is called in its note, log line and steps. */
export interface StopWalkNames {
  /** The evidence note's key, e.g. `stopSeries.markDelivered`. */
  key: string;
  /** The step a stop that broke the clause fails. */
  brokenStep(k: number): string;
  /** The step requiring that the interleave happened at some stop. */
  interleaveStep: string;
  /**
   * Why nothing was judged when it never did (a `HarnessError`); `refused` says at how many
   * stops the store refused the move, with its first answer (`2 of 9 stops (returned false)`).
   */
  neverInterleaved(stops: number, refused?: string): string;
  /** The note's value. */
  note(counts: WalkCounts): unknown;
  /** The log line. */
  log(counts: WalkCounts): string;
}

/** A walk over one operation's lock calls. */
export interface LockStopWalk {
  names: StopWalkNames;
  /** One stop before lock call k. */
  stopAt(k: number): Promise<StopResult>;
  /** The most stops made (default 100). */
  maxStops?: number;
}

/**
 * The names of a walk whose actor is stopped inside `write` while `mover` moves.
 *
 * @param walk The note key, the store method, what it shows, who moves.
 * @returns The names.
 * @example
 * ```ts
 * import { competitorWalkNames } from "./stop_at_lock.ts";
 * const names = competitorWalkNames({
 *   key: "stopSeries.markDelivered",
 *   write: "markDelivered",
 *   what: "a delivery mark after a recovery took the attempt over",
 *   mover: "the competitor",
 * });
 * console.log(names.brokenStep(3)); // markDelivered stopped at lock call 3: a delivery mark …
 * ```
 */
export function competitorWalkNames(
  walk: { key: string; write: string; what: string; mover: string },
): StopWalkNames {
  const { key, write, what, mover } = walk;
  return {
    key,
    brokenStep: (k) => `${write} stopped at lock call ${k}: ${what}`,
    interleaveStep: `${write}, ${what}: a move landed during a stop`,
    neverInterleaved: (stops, refused) =>
      `no move of ${mover} committed while the actor was stopped inside ${write} (${stops} stops): the interleave never happened, nothing was judged${
        refused ? `; the store refused ${mover}'s move at ${refused}` : ""
      }`,
    note: ({ stops, raced, complete }) => ({ stops, movedWhileStopped: raced, complete }),
    log: ({ stops, raced }) =>
      `  stop series ${key}: ${stops} stop(s) inside ${write}, ${mover} moved while stopped at ${raced}`,
  };
}

/**
 * Walks one operation's lock calls with `walk.stopAt(k)`, k = 1, 2, … until the operation
 * completes before its k-th; fails a step on the first violation; notes the walk, and
 * requires that the interleave happened at some stop (else a `HarnessError`: nothing was
 * judged).
 *
 * @param ctx The cell's run (the note).
 * @param t The test context the steps are taken in.
 * @param walk The names, the stop, the most stops.
 * @example
 * ```ts ignore
 * import { competitorWalkNames, walkLockStops } from "./stop_at_lock.ts";
 * await walkLockStops(ctx, t, { names: competitorWalkNames(names), stopAt: (k) => stopAt(k) });
 * ```
 */
export async function walkLockStops(
  ctx: CellRun,
  t: Deno.TestContext,
  walk: LockStopWalk,
): Promise<void> {
  const { names } = walk;
  const counts: WalkCounts = { stops: 0, raced: 0, complete: false };
  // The stops at which the store refused the move, and its first such answer.
  const refusals = { stops: 0, answer: "" };
  for (let k = 1; k <= (walk.maxStops ?? 100); k++) {
    const result = await walk.stopAt(k);
    if (!result.stopped) {
      counts.complete = true;
      break;
    }
    if (result.refused) {
      refusals.stops++;
      refusals.answer ||= result.refused;
    }
    counts.stops++;
    if (result.raced) counts.raced++;
    if (result.violation) {
      await t.step(names.brokenStep(k), () => {
        throw new Error(result.violation);
      });
      return;
    }
  }
  ctx.note(names.key, names.note(counts));
  console.log(names.log(counts));
  await t.step(names.interleaveStep, () => {
    if (counts.raced > 0) return;
    const refused = refusals.stops
      ? `${refusals.stops} of ${counts.stops} stops (${refusals.answer})`
      : undefined;
    throw new HarnessError(names.neverInterleaved(counts.stops, refused));
  });
}

/**
 * A child's JSON report, once whole (its last line ends), else `undefined`.
 *
 * @param path The report's file.
 * @returns The report, or `undefined` while it is missing or being written.
 * @example
 * ```ts
 * import { readReport } from "./stop_at_lock.ts";
 * console.log(readReport("/nonexistent/report.json")); // undefined
 * ```
 */
export function readReport<T>(path: string): T | undefined {
  try {
    const text = Deno.readTextFileSync(path);
    return text.endsWith("\n") ? JSON.parse(text) as T : undefined;
  } catch {
    return undefined;
  }
}
