/**
 * What a judge is judging in its own process, kept in a file its parent reads: a store
 * that never returns from opening what a crash left (a lock it waits for without end, a
 * loop that spins) stops that process's event loop, so only another process can bound the
 * wait and say which state it was.
 *
 * The judge's process names the file in {@linkcode JUDGING_BEACON_ENV}, and its parent
 * ({@linkcode watchJudging}) kills it past the deadline; without the file every call here
 * only runs its work, and a judge bounds what waits it can itself
 * ({@linkcode judgingDeadlineMs}).
 *
 * @example
 * ```ts
 * import { judging, readJudgingBeacon } from "./judging_beacon.ts";
 * const verdict = await judging("state: before #3 (sync)", () => "sound");
 * console.log(verdict, readJudgingBeacon("/nonexistent")); // sound undefined
 * ```
 *
 * @module
 */

import { envMilliseconds } from "./env_ms.ts";
import { type SelfWatch, startSelfWatch } from "./_self_watch.ts";

/** The environment variable naming the beacon's file. */
export const JUDGING_BEACON_ENV = "CELLS_JUDGING_BEACON";

/**
 * The environment variable holding the deadline of one judging in a process nobody
 * watches, in milliseconds.
 */
export const JUDGING_DEADLINE_ENV = "CELLS_JUDGING_DEADLINE_MS";

/**
 * How long one judging in a judge's own process may run by default: a state's recovery
 * and checks take milliseconds, so a store still busy after this never opens what a crash
 * left.
 */
export const JUDGING_DEADLINE_MS = 2 * 60_000;

/** Where a judging is: the leg and clause it judges. */
export interface JudgingPlace {
  /** The journal-mode leg. */
  leg?: string;
  /** The clause, as its outcome names it. */
  clause?: string;
  /** The clause's cell. */
  cell?: number;
  /** The run folder the judging reads from, kept as evidence when its process is killed. */
  folder?: string;
}

/** The oldest judging still running, as the beacon's file holds it. */
export interface JudgingBeacon extends JudgingPlace {
  /** What is judged, e.g. the crash state's label. */
  what: string;
  /** When it started (`Date.now()` of the judge's process). */
  since: number;
}

let place: JudgingPlace = {};
const folders = new Map<string, JudgingPlace>();
let nextId = 0;
const running = new Map<number, JudgingBeacon>();

/**
 * Read once, as the module loads, and the beacon's variable removed: it names this
 * process's file, and a child started with this process's environment (a recorded child)
 * must not write it.
 */
function claimSettings(): { file: string | null; deadlineMs: number | RangeError } {
  let file: string | null = null;
  let deadlineMs: number | RangeError = JUDGING_DEADLINE_MS;
  try {
    file = Deno.env.get(JUDGING_BEACON_ENV) || null;
    if (file) Deno.env.delete(JUDGING_BEACON_ENV);
  } catch {
    // No environment access (a store's child): nobody watches this process.
    return { file, deadlineMs };
  }
  try {
    deadlineMs = envMilliseconds(JUDGING_DEADLINE_ENV, JUDGING_DEADLINE_MS);
  } catch (error) {
    // Thrown where the deadline is asked for, not at an import.
    deadlineMs = error as RangeError;
  }
  return { file, deadlineMs };
}

const settings = claimSettings();

/**
 * The deadline of one judging in this process: {@linkcode JUDGING_DEADLINE_ENV}, else
 * {@linkcode JUDGING_DEADLINE_MS}.
 *
 * @returns Milliseconds.
 * @throws {RangeError} When {@linkcode JUDGING_DEADLINE_ENV} is not a whole number of
 * milliseconds above 0.
 */
export function judgingDeadlineMs(): number {
  if (settings.deadlineMs instanceof RangeError) throw settings.deadlineMs;
  return settings.deadlineMs;
}

/**
 * Whether a parent watches this process's judgings (and bounds them, even a synchronous
 * wait, by killing it).
 *
 * @returns `true` when {@linkcode JUDGING_BEACON_ENV} names a file.
 */
export function judgingWatched(): boolean {
  return settings.file !== null;
}

let shown: JudgingBeacon | undefined;

/** Writes the oldest running judging, when it is not the one the file shows already. */
function publish(path: string): void {
  let oldest: JudgingBeacon | undefined;
  for (const beacon of running.values()) {
    if (!oldest || beacon.since < oldest.since) oldest = beacon;
  }
  // A judging inside an older one (a store call inside a state's) changes nothing shown.
  if (oldest === shown) return;
  shown = oldest;
  Deno.writeTextFileSync(path, oldest ? JSON.stringify(oldest) : "");
}

/** The place of the registered folder holding `path`, else the current one. */
function placeOf(path: string | undefined): JudgingPlace {
  if (path === undefined) return place;
  let best: [string, JudgingPlace] | undefined;
  for (const entry of folders) {
    if (path.startsWith(`${entry[0]}/`) && (!best || entry[0].length > best[0].length)) {
      best = entry;
    }
  }
  return best?.[1] ?? place;
}

/**
 * Runs `work`, the judging of `what` in this process, known to the beacon while it runs
 * (several may run at once: the beacon shows the oldest).
 *
 * @param what What is judged, for the failure's words.
 * @param work The judging.
 * @param file A file the judging reads, whose registered folder gives its place.
 * @returns What `work` returns.
 */
export async function judging<T>(
  what: string,
  work: () => T | Promise<T>,
  file?: string,
): Promise<T> {
  const leave = enterJudging(what, file);
  try {
    return await work();
  } finally {
    leave();
  }
}

/**
 * Makes the judging of `what` known to the beacon until the returned function is called
 * (for a call that may return at once or later).
 *
 * @param what What is judged, for the failure's words.
 * @param file A file the judging reads, whose registered folder gives its place.
 * @returns Ends the judging.
 */
export function enterJudging(what: string, file?: string): () => void {
  const path = settings.file;
  if (!path) return self ? enterWatched(self, what, placeOf(file)) : NOTHING;
  const id = nextId++;
  running.set(id, { ...placeOf(file), what, since: Date.now() });
  publish(path);
  return () => {
    if (!running.delete(id)) return;
    publish(path);
  };
}

/** A blocked process's watcher waits this long past the deadline for the judge's own bound. */
const SELF_GRACE_MS = 2_000;
const NOTHING = () => {};
let self: SelfWatch | undefined;
let selfStarting: Promise<void> | undefined;

/** A judging known to this process's own watcher, which kills the process past the deadline. */
function enterWatched(watch: SelfWatch, what: string, at: JudgingPlace): () => void {
  const id = nextId++;
  const ms = judgingDeadlineMs();
  // The words are made in the watcher, only if it fires: a judging is a store call here.
  watch.enter(id, { what, folder: at.folder, seconds: ms / 1000, ms: ms + SELF_GRACE_MS });
  let open = true;
  return () => {
    if (open) watch.leave(id);
    open = false;
  };
}

/**
 * In a process no parent watches, starts a thread of its own that bounds its judgings: one
 * that runs past the deadline, even blocking the main thread, is named on stderr and the
 * process killed (a test run that would hang for good). Nothing where a parent watches.
 *
 * @returns Once the thread runs (at once when it cannot).
 */
export function watchJudgingHere(): Promise<void> {
  if (settings.file || settings.deadlineMs instanceof RangeError) return Promise.resolve();
  return selfStarting ??= startSelfWatch().then((watch) => {
    self = watch;
  });
}

/**
 * Whether this process's judgings are bounded by something that sees a blocked thread: a
 * parent ({@linkcode judgingWatched}) or its own thread ({@linkcode watchJudgingHere}).
 *
 * @returns `true` when a judging here is watched.
 */
export function judgingTracked(): boolean {
  return settings.file !== null || self !== undefined;
}

/**
 * Runs `work` with the judgings inside it placed on a leg and clause (one at a time).
 *
 * @param at The leg and clause.
 * @param work What runs there.
 * @returns What `work` returns.
 */
export async function judgingAt<T>(at: JudgingPlace, work: () => Promise<T>): Promise<T> {
  const before = place;
  place = at;
  try {
    return await work();
  } finally {
    place = before;
  }
}

/**
 * Places the judgings of files under `folder` (several clauses may run at once, each in a
 * folder of its own).
 *
 * @param folder The folder.
 * @param at Its leg and clause.
 * @returns Ends the registration.
 */
export function judgingIn(folder: string, at: JudgingPlace): () => void {
  folders.set(folder, { ...at, folder });
  return () => folders.delete(folder);
}

/**
 * The beacon's judging, if one is running.
 *
 * @param path The beacon's file.
 * @returns The oldest judging still running, or `undefined`.
 */
export function readJudgingBeacon(path: string): JudgingBeacon | undefined {
  try {
    const text = Deno.readTextFileSync(path);
    return text ? JSON.parse(text) as JudgingBeacon : undefined;
  } catch {
    return undefined; // not written yet, or caught mid-write: read again next time
  }
}

/** A running watch over a child's beacon: the judging it killed the child for, if any. */
export interface JudgingWatch {
  /** The judging that ran past the deadline (the child was killed then), or `undefined`. */
  stalled(): JudgingBeacon | undefined;
  /** Stops the watch (the child ended). */
  clear(): void;
}

/**
 * Watches a child's beacon: a judging still running `ms` after it started has the child
 * killed with SIGKILL.
 *
 * @param child The child whose environment names `path` in {@linkcode JUDGING_BEACON_ENV}.
 * @param path The beacon's file.
 * @param ms How long one judging may run.
 * @returns The watch.
 */
export function watchJudging(child: Deno.ChildProcess, path: string, ms: number): JudgingWatch {
  let stalled: JudgingBeacon | undefined;
  const timer = setInterval(() => {
    const beacon = readJudgingBeacon(path);
    if (!beacon || Date.now() - beacon.since < ms) return;
    stalled = beacon;
    clearInterval(timer);
    try {
      child.kill("SIGKILL");
    } catch { /* it ended meanwhile */ }
  }, Math.min(1000, ms / 4));
  return { stalled: () => stalled, clear: () => clearInterval(timer) };
}
