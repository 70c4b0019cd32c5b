// Children released together: each opens the store and signals ready in a folder, and
// waits on one file barrier; once all are ready the barrier is released, so their
// operations race as closely as processes can.
import { countReady, releaseBarrier } from "../../harness/barrier.ts";
import { type Child, reapAll } from "../../harness/child.ts";
import { waitFor } from "../../harness/wait_for.ts";

/** How long the children may take to get ready. */
const READY_DEADLINE_MS = 60_000;

/** The children of one race and where they wait. */
export interface TogetherPlan {
  /** How many children. */
  count: number;
  /** What they are called in the wait's message, e.g. `claimants`. */
  what: string;
  /** The folder their ready files go to. */
  dir: string;
  /** The barrier file they wait on. */
  barrier: string;
}

/**
 * Spawns `plan.count` children, waits until every one signalled ready in `plan.dir`,
 * releases the barrier and waits for all to exit; every child is reaped, whatever happened.
 *
 * @param spawn Spawns the `i`-th child.
 * @param plan How many, what they are called, their folder and barrier.
 * @returns The children, all exited.
 * @example
 * ```ts ignore
 * import { releasedTogether } from "./released_together.ts";
 * const dir = ctx.run.file("round-0");
 * const plan = { count: 8, what: "claimants", dir, barrier: `${dir}/go` };
 * const children = await releasedTogether((i) => ctx.spawn(CLAIMANT, [db, dir, `c${i}`]), plan);
 * ```
 */
export async function releasedTogether(
  spawn: (i: number) => Child,
  plan: TogetherPlan,
): Promise<Child[]> {
  const { count, what, dir, barrier } = plan;
  const children: Child[] = [];
  try {
    for (let i = 0; i < count; i++) children.push(spawn(i));
    await waitFor(() => countReady(dir) >= count, {
      what: `${count} ${what} ready`,
      deadlineMs: READY_DEADLINE_MS,
      children,
      observed: () => `${countReady(dir)} ready`,
    });
    releaseBarrier(barrier);
    await Promise.all(children.map((child) => child.status));
  } finally {
    await reapAll(children);
  }
  return children;
}
