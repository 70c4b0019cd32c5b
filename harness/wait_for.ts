import type { Child } from "./child.ts";
import { Activity } from "./activity.ts";
import { HarnessError } from "./harness_error.ts";

/**
 * Options of {@linkcode waitFor}.
 *
 * @example
 * ```ts
 * import { countAcks } from "./ack_journal.ts";
 * import { type WaitOptions, waitFor } from "./wait_for.ts";
 * const path = `${Deno.makeTempDirSync()}/acks.jsonl`;
 * Deno.writeTextFileSync(path, "{}\n{}\n"); // what a writer child appends
 * const observed = () => `${countAcks(path)} acks`;
 * const options: WaitOptions = { what: "2 acks", deadlineMs: 5_000, observed };
 * await waitFor(() => countAcks(path) >= 2, options);
 * ```
 */
export interface WaitOptions {
  /** What is awaited, for messages. */
  what: string;
  /** Give up after this many milliseconds (default 60 s). */
  deadlineMs?: number;
  /** Poll interval (default 20 ms). */
  intervalMs?: number;
  /** Children whose early exit fails the wait at once with their stderr. */
  children?: readonly Child[];
  /** Describes the last observed state for the deadline message. */
  observed?: () => string;
  /**
   * What the awaited work has done so far (a count of acknowledgements, say). While it
   * changes the wait is not stalled: `deadlineMs` then counts from its last change, so a
   * slow store that keeps acknowledging is waited for, and one that stops is given up on
   * as before. Looked at about once a second (a quarter of a shorter deadline).
   */
  progress?: () => unknown;
  /**
   * With `progress`, give up after this many milliseconds however the work progresses
   * (default 10 × `deadlineMs`): a {@linkcode HarnessError}, since the store did not stop
   * but was too slow to judge in time.
   */
  limitMs?: number;
}

/**
 * Raised when a wait ends without its condition: a child exited, or the deadline passed.
 *
 * @example
 * ```ts
 * import { WaitError, waitFor } from "./wait_for.ts";
 * try {
 *   await waitFor(() => false, { what: "a condition that never holds", deadlineMs: 50 });
 * } catch (error) {
 *   console.log(error instanceof WaitError); // true
 * }
 * ```
 */
export class WaitError extends Error {
  /** Creates the error. */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "WaitError";
  }
}

/**
 * Polls `predicate` until it returns true. Fails at once, with the child's stderr, when
 * a watched child exits first; fails with the last observed state at the deadline.
 *
 * @param predicate The condition (may be async).
 * @param options What, deadline, interval, watched children, observer.
 * @returns The milliseconds waited.
 * @example
 * ```ts
 * import { waitFor } from "./wait_for.ts";
 * let n = 0;
 * await waitFor(() => ++n >= 3, { what: "three polls", deadlineMs: 1000, intervalMs: 1 });
 * ```
 */
export async function waitFor(
  predicate: () => boolean | Promise<boolean>,
  options: WaitOptions,
): Promise<number> {
  const deadline = options.deadlineMs ?? 60_000;
  const interval = options.intervalMs ?? 20;
  const started = performance.now();
  const progress = options.progress &&
    watchProgress(options.progress, Math.min(1_000, deadline / 4));
  const limit = progress ? options.limitMs ?? 10 * deadline : deadline;
  for (;;) {
    if (await predicate()) return performance.now() - started;
    const dead = options.children?.find((child) => child.exited);
    if (dead) {
      // One last look: the condition may have been met just before the exit.
      if (await predicate()) return performance.now() - started;
      throw new WaitError(
        `Gave up waiting for ${options.what}: the ${dead.describe()}${
          options.observed ? `\nlast observed: ${options.observed()}` : ""
        }`,
      );
    }
    const now = performance.now();
    const waited = now - started;
    let stalled = progress ? progress.quietMs(now) : waited;
    // A last look before giving up: the work may have moved since the last one.
    if (progress && stalled >= deadline) stalled = progress.quietMs(now, true);
    if (stalled >= deadline || waited >= limit) {
      const error = stalled >= deadline ? WaitError : HarnessError;
      throw new error(
        `Gave up waiting for ${options.what} after ${Math.round(waited)} ms${
          progress && stalled < deadline
            ? ` (it progressed throughout: a store this slow is not judged within ${limit} ms; raise the wait's deadline)`
            : progress && waited > stalled + interval
            ? ` (nothing progressed in the last ${Math.round(stalled)} ms)`
            : ""
        }${options.observed ? `: last observed: ${options.observed()}` : ""}${
          options.children?.length
            ? `\n${options.children.map((child) => child.describe()).join("\n")}`
            : ""
        }`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, interval));
  }
}

/** How long `progress` has not changed, looked at every `everyMs` at most (or when `fresh`). */
function watchProgress(progress: () => unknown, everyMs: number) {
  const activity = new Activity();
  const look = activity.watch(progress);
  look();
  let looked = performance.now();
  return {
    quietMs(now: number, fresh = false): number {
      if (fresh || now - looked >= everyMs) {
        looked = now;
        look();
      }
      return activity.quietMs();
    },
  };
}
