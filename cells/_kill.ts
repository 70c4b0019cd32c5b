// The kill moves the cells share: a random kill once enough is acknowledged and a run to
// a named crash point, each observing the journal mode the writer ran in.
import { countAcks } from "../harness/ack_journal.ts";
import { type Child, classifyExit, killWhileAlive, reapAll } from "../harness/child.ts";
import { waitFor } from "../harness/wait_for.ts";
import type { CellRun } from "./_cell.ts";
import { tally } from "./_tally.ts";

/**
 * SIGKILLs `child` (asserted alive) once `acksPath` holds `count` acknowledgements, and
 * observes the journal mode it ran in on `db` before anything reopens it.
 */
export async function killAfterAcks(
  ctx: CellRun,
  child: Child,
  db: string,
  acksPath: string,
  count: number,
  what: string,
  deadlineMs = 60_000,
): Promise<void> {
  try {
    const waited = await waitFor(() => countAcks(acksPath) >= count, {
      what: `${count} acknowledged ${what}`,
      deadlineMs,
      children: [child],
      observed: () => `${countAcks(acksPath)} acknowledged`,
    });
    ctx.note("killAfterMs", Math.round(waited));
    await killWhileAlive(child);
    tally(ctx, "sigkills", 1);
  } finally {
    await reapAll([child]);
  }
  ctx.observeLeg(db, `random kill after ${count} ${what}`);
}

/**
 * Waits (bounded) for a child armed with `SESSION_DB_CRASH_AT` to die, reaps it, and
 * counts the SIGKILL; the caller asserts it died at the point.
 */
export async function awaitCrash(
  ctx: CellRun,
  crasher: Child,
  point: string,
  db: string,
  acksPath: string,
): Promise<boolean> {
  try {
    await waitFor(() => crasher.exited !== undefined, {
      what: `the child to reach crash point ${point}`,
      deadlineMs: 30_000,
      observed: () => `${countAcks(acksPath)} acknowledged`,
    });
  } finally {
    await reapAll([crasher]);
  }
  const killed = classifyExit(crasher.exited!).kind === "killed";
  tally(ctx, "sigkills", killed ? 1 : 0);
  if (killed) ctx.observeLeg(db, point);
  return killed;
}
