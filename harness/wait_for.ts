import type { Child } from "./child.ts";

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
    const waited = performance.now() - started;
    if (waited >= deadline) {
      throw new WaitError(
        `Gave up waiting for ${options.what} after ${Math.round(waited)} ms${
          options.observed ? `: last observed: ${options.observed()}` : ""
        }${
          options.children?.length
            ? `\n${options.children.map((child) => child.describe()).join("\n")}`
            : ""
        }`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, interval));
  }
}
