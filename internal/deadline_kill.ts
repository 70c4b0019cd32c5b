/**
 * Kills a child with SIGKILL once a deadline passes, unless it ended first: the bound on
 * every wait for a child whose end nothing else bounds.
 *
 * @example
 * ```ts
 * import { killAtDeadline } from "./deadline_kill.ts";
 * const child = new Deno.Command("sleep", { args: ["5"] }).spawn();
 * const deadline = killAtDeadline(child, 100);
 * await child.status;
 * console.log(deadline.passed()); // true
 * deadline.clear();
 * ```
 *
 * @module
 */

/** A running deadline: whether it passed (and killed the child), and how to stop it. */
export interface ChildDeadline {
  /** Whether the deadline passed before the child ended (it was killed then). */
  passed(): boolean;
  /** Stops the deadline (the child ended). */
  clear(): void;
}

/**
 * Arms the deadline.
 *
 * @param child The child, or how to kill it (with what it started: its tree's kill).
 * @param ms How long it may run.
 * @returns The deadline.
 */
export function killAtDeadline(child: Deno.ChildProcess | (() => void), ms: number): ChildDeadline {
  let late = false;
  const timer = setTimeout(() => {
    late = true;
    try {
      if (typeof child === "function") child();
      else child.kill("SIGKILL");
    } catch { /* it ended meanwhile */ }
  }, ms);
  return { passed: () => late, clear: () => clearTimeout(timer) };
}
