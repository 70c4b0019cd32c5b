/**
 * When a run last moved: a step ended, a child started or exited, an awaited count changed.
 * A deadline over a whole run asks it whether the run stalled (a verdict on the store) or
 * kept moving and was only too slow to judge in time (no verdict).
 *
 * @example
 * ```ts
 * import { Activity } from "./activity.ts";
 * const activity = new Activity();
 * let acks = 0;
 * const progress = activity.watch(() => acks);
 * progress(); // the first look: nothing moved yet
 * acks = 3;
 * progress(); // a change: the run moved now
 * console.log(activity.quietMs() < 1_000); // true
 * ```
 */
export class Activity {
  #movedAt = performance.now();

  /** Notes that the run moved now. */
  mark(): void {
    this.#movedAt = performance.now();
  }

  /**
   * How long the run has not moved.
   *
   * @returns The milliseconds since its last move (or since it started).
   */
  quietMs(): number {
    return performance.now() - this.#movedAt;
  }

  /**
   * Wraps a measure of progress (a count of acknowledgements, say) so that each change
   * it returns is a move of the run; pass it as a wait's `progress` (`waitFor`).
   *
   * @param measure What the awaited work has done so far.
   * @returns The same measure, noting its changes.
   * @example
   * ```ts
   * import { Activity } from "./activity.ts";
   * const activity = new Activity();
   * const progress = activity.watch(() => Date.now());
   * progress();
   * ```
   */
  watch<T>(measure: () => T): () => T {
    let seen: { value: T } | undefined;
    return () => {
      const value = measure();
      if (seen && !Object.is(value, seen.value)) this.mark();
      seen = { value };
      return value;
    };
  }
}
