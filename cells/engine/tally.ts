// Running totals that every cell records the same way, so that `deno task soak` can
// sum them across runs from the cells' reports.
import type { CellRun } from "./cell.ts";

/** The figures every cell keeps a total of. */
export type Tally =
  /** SIGKILLs that ended a child (sent by the parent, or by the child at a crash point). */
  | "sigkills"
  /** Operations the store acknowledged to a child before it died or finished. */
  | "acknowledgedOps"
  /** Acknowledged operations missing or changed after recovery (must stay 0). */
  | "lost";

/**
 * Adds `n` to one of the run's totals (creating it at 0).
 *
 * @param ctx The cell's run.
 * @param name The total.
 * @param n How much to add.
 */
export function tally(ctx: CellRun, name: Tally, n: number): void {
  ctx.note(name, (Number(ctx.figures[name]) || 0) + n);
}

/** Starts every total at 0, so that a report always carries all three. */
export function startTallies(ctx: CellRun): void {
  for (const name of ["sigkills", "acknowledgedOps", "lost"] as const) tally(ctx, name, 0);
}
