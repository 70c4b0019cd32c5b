// The kill moves the cells share: a random kill once enough is acknowledged and a run to
// a named crash point, each observing the journal mode the writer ran in.
import { countAcks } from "../harness/ack_journal.ts";
import { type Child, classifyExit, killWhileAlive, reapAll } from "../harness/child.ts";
import { waitFor } from "../harness/wait_for.ts";
import { exists } from "../internal/fs.ts";
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
/**
 * Waits (bounded) for `child` to exit on its own, then reaps it: a crash point or the
 * end of its work, never our kill. `observed` names what it had done when time ran out.
 */
export async function untilExited(
  child: Child,
  what: string,
  deadlineMs = 30_000,
  observed?: () => string,
): Promise<void> {
  try {
    await waitFor(() => child.exited !== undefined, {
      what,
      deadlineMs,
      ...(observed ? { observed } : {}),
    });
  } finally {
    await reapAll([child]);
  }
}

/**
 * SIGKILLs `child` (asserted alive) once it has created `ready`: the child got to the
 * moment the caller wants it killed in, and waits there. Fails at once, with its stderr,
 * when it dies first; reaps it either way.
 */
export async function killWhenReady(
  child: Child,
  ready: string,
  what: string,
  deadlineMs: number,
): Promise<void> {
  try {
    await waitFor(() => exists(ready), { what, deadlineMs, children: [child] });
    await killWhileAlive(child);
  } finally {
    await reapAll([child]);
  }
}

export async function awaitCrash(
  ctx: CellRun,
  crasher: Child,
  point: string,
  db: string,
  acksPath: string,
): Promise<boolean> {
  await untilExited(
    crasher,
    `the child to reach crash point ${point}`,
    30_000,
    () => `${countAcks(acksPath)} acknowledged`,
  );
  const killed = classifyExit(crasher.exited!).kind === "killed";
  tally(ctx, "sigkills", killed ? 1 : 0);
  if (killed) ctx.observeLeg(db, point);
  return killed;
}
