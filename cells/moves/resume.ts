// Resume after recovery: once a recovered state is judged, a fresh process continues the
// clause's own operation on it and the result is crashed and judged again, both lives'
// acknowledged work included. A store that reads its past back but loses or corrupts the
// first write after recovery (a next id taken from a value recovery left stale) fails here.
import { classifyExit, reapAll, TIMED_OUT } from "../../harness/child.ts";
import { HarnessError } from "../../harness/harness_error.ts";
import { waitFor } from "../../harness/wait_for.ts";
import type { CellRun } from "../engine/cell.ts";
import { tally } from "../engine/tally.ts";

/** The acknowledged operations a resumed child makes before it kills itself. */
export const RESUMED_OPS = 3;

/**
 * Runs `script` (a cell child that continues the operation on `db` and SIGKILLs itself
 * right after its last acknowledged operation) to its self-kill, counts the kill and
 * observes the leg (at rest: it died between operations). Throws the store's failure
 * when the child died otherwise (its error, its stderr), and a `HarnessError` when it only
 * outlived its lifetime guard.
 */
export async function resumeToSelfKill(
  ctx: CellRun,
  script: URL,
  args: string[],
  db: string,
  what: string,
  deadlineMs = 60_000,
): Promise<void> {
  const child = ctx.spawn(script, args);
  try {
    await waitFor(() => child.exited !== undefined, {
      what: `${what}: a fresh process to continue the recovered state`,
      deadlineMs,
    });
  } finally {
    await reapAll([child]);
  }
  const exit = classifyExit(child.exited!);
  if (exit.kind === "killed") {
    tally(ctx, "sigkills", 1);
    ctx.observeLeg(db, `${what}, resumed`, true);
    return;
  }
  const message = `${what}: the process continuing the recovered state failed: ${child.describe()}`;
  if (exit.signal === null && exit.code === TIMED_OUT) throw new HarnessError(message);
  throw new Error(message);
}

/**
 * {@linkcode resumeToSelfKill} as a check of the clause: when the fresh process fails, the
 * step `<label>, resumed: the first <ops> after recovery are taken` fails with its error
 * (an ERROR when only the suite failed) and `false` is returned.
 */
export async function resumedStep(
  ctx: CellRun,
  t: Deno.TestContext,
  ops: string,
  script: URL,
  args: string[],
  db: string,
  label: string,
): Promise<boolean> {
  try {
    await resumeToSelfKill(ctx, script, args, db, label);
    return true;
  } catch (error) {
    await t.step(`${label}, resumed: the first ${ops} after recovery are taken`, () => {
      throw error;
    });
    return false;
  }
}
