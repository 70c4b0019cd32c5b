// Cell 6's busy window: the lock holder (`children/lock_hog.ts`) takes the write lock before the
// roles start and keeps it until every role has invoked an operation against it and the
// window has lasted its length. Whether a store meets SQLITE_BUSY no longer depends on
// how the scheduler lines the processes up: each role's first call finds the lock taken,
// past a 1 s busy timeout, every run.
import { releaseBarrier } from "../../harness/barrier.ts";
import type { Child } from "../../harness/child.ts";
import { waitFor } from "../../harness/wait_for.ts";
import { exists } from "../../internal/fs.ts";
import { readRole, type RoleEntry } from "./role_journal.ts";

/** A role as the window sees it. */
export interface WindowRole {
  role: string;
  journal: string;
  child: Child;
}

/** What the window observed. */
export interface BusyWindow {
  /** Wall-clock ms when the holder had the lock, and just before it let go. */
  heldAt: number;
  releasedAt: number;
  /** Operations each role invoked while the lock was held. */
  invokedWhileHeld: Record<string, number>;
  /** Roles that invoked nothing while it was held (they died first). */
  absent: string[];
}

/**
 * Waits for the lock holder to write a time to `path` (whole: it renames it there) and
 * returns it.
 */
async function timeWritten(
  hog: Child,
  path: string,
  wait: { what: string; deadlineMs: number },
): Promise<number> {
  const { what, deadlineMs } = wait;
  await waitFor(() => exists(path), { what, deadlineMs, children: [hog] });
  const text = Deno.readTextFileSync(path).trim();
  const time = Number(text);
  if (!text || !Number.isSafeInteger(time)) {
    throw new Error(`The lock holder wrote "${text}" to ${path}, not a time`);
  }
  return time;
}

function finished(run: WindowRole, entries: readonly RoleEntry[]): boolean {
  return run.child.exited !== undefined || entries.some((e) => e.k === "done");
}

function invokedBetween(entries: readonly RoleEntry[], from: number, to = Infinity): number {
  return entries.filter((e) => e.k === "inv" && e.t !== undefined && e.t >= from && e.t <= to)
    .length;
}

/** How {@linkcode busyWindow} runs its window. */
export interface WindowPlan {
  /** The window's files (`.request`, `.held`, `.release`, `.released`). */
  prefix: string;
  /** Releases the roles' start barrier. */
  start: () => void;
  /** How long the lock is held at least. */
  lengthMs: number;
  /** How long each wait may take. */
  deadlineMs: number;
}

/**
 * Runs the window: has the holder take the lock while the roles wait at their start
 * barrier, starts them, waits until each role invoked an operation against the held lock
 * (or finished or died) and `plan.lengthMs` passed, then lets go.
 *
 * @param hog The lock holder.
 * @param runs The roles, ready at their start barrier.
 * @param plan The window's files, the start, its length and the waits' deadline.
 * @returns What it observed.
 * @example
 * ```ts ignore
 * const window = await busyWindow(hog, runs, {
 *   prefix: ctx.run.file("window"),
 *   start: () => releaseBarrier(ctx.run.file("start")),
 *   lengthMs: 1500,
 *   deadlineMs: 30_000,
 * });
 * console.log(window.absent); // []
 * ```
 */
export async function busyWindow(
  hog: Child,
  runs: readonly WindowRole[],
  plan: WindowPlan,
): Promise<BusyWindow> {
  const { prefix, start, lengthMs, deadlineMs } = plan;
  const entries = (run: WindowRole) => readRole(run.journal);
  releaseBarrier(`${prefix}.request`);
  const heldAt = await timeWritten(hog, `${prefix}.held`, {
    what: "the lock holder to take the write lock for the busy window",
    deadlineMs,
  });
  const taken = performance.now();
  start();
  const met = (run: WindowRole) => {
    const mine = entries(run);
    return finished(run, mine) || invokedBetween(mine, heldAt) > 0;
  };
  await waitFor(() => performance.now() - taken >= lengthMs && runs.every(met), {
    what: `every role to invoke an operation while the write lock is held`,
    deadlineMs: lengthMs + deadlineMs,
    children: [hog],
    observed: () => `still to invoke: ${runs.filter((run) => !met(run)).map((run) => run.role)}`,
  });
  releaseBarrier(`${prefix}.release`);
  const releasedAt = await timeWritten(hog, `${prefix}.released`, {
    what: "the lock holder to end the busy window",
    deadlineMs,
  });
  const invokedWhileHeld: Record<string, number> = {};
  const absent: string[] = [];
  for (const run of runs) {
    const n = invokedBetween(entries(run), heldAt, releasedAt);
    invokedWhileHeld[run.role] = n;
    if (n === 0) absent.push(run.role);
  }
  return { heldAt, releasedAt, invokedWhileHeld, absent };
}

/**
 * Whether an operation overlapped the window: its latency measures the window, not the
 * store, and is left out of the latency figures.
 *
 * @param window The window, when one ran.
 * @param entry The operation's acknowledgement (its invocation and return times).
 */
export function overlapsWindow(window: BusyWindow | undefined, entry: RoleEntry): boolean {
  return window !== undefined && entry.t0 !== undefined && entry.t1 !== undefined &&
    entry.t0 <= window.releasedAt && entry.t1 >= window.heldAt;
}
