// The kill moves the cells share: a random kill once enough is acknowledged and a run to
// a named crash point, each observing the journal mode the writer ran in.
import { ok } from "node:assert/strict";
import { countAcks, readAckJournal } from "../../harness/ack_journal.ts";
import { releaseBarrier } from "../../harness/barrier.ts";
import {
  type Child,
  classifyExit,
  KillError,
  killWhileAlive,
  reapAll,
  TIMED_OUT,
} from "../../harness/child.ts";
import { HarnessError } from "../../harness/harness_error.ts";
import { procText } from "../../harness/_proc.ts";
import { waitFor } from "../../harness/wait_for.ts";
import { exists, filesIn } from "../../internal/fs.ts";
import type { CellRun } from "../engine/cell.ts";
import { tally } from "../engine/tally.ts";
import { LAST_WRITE } from "./_children.ts";
import type { Store } from "../contract/target.ts";
import { withStore } from "../contract/with_store.ts";

/**
 * {@linkcode killWhileAlive}, telling why a kill did not land. The cells' children never
 * end on their own while the cell means to kill them (they loop, or wait to be killed),
 * except by their lifetime guard (`TIMED_OUT`): such a child outlived the plan, which is
 * the suite's failure (a `HarnessError`). A child that died otherwise (an error thrown by
 * the store, or a store that exits the process) failed inside the store: the `KillError`
 * with its stderr stands, the store's FAIL.
 */
export async function killLanding(child: Child, what: string): Promise<number> {
  try {
    return await killWhileAlive(child);
  } catch (error) {
    if (!(error instanceof KillError)) throw error;
    const status = child.exited ?? await child.status;
    if (status.signal === null && status.code === TIMED_OUT) {
      throw new HarnessError(
        `Cannot kill ${what}: the child outlived its lifetime guard before the kill (the run was too slow for the plan): ${child.describe()}`,
        { cause: error },
      );
    }
    throw error;
  }
}

/** When {@linkcode killAfterAcks} kills, and where it observes the journal mode. */
export interface AcksKill {
  /** The database the child writes. */
  db: string;
  /** The child's acknowledgement journal. */
  acksPath: string;
  /** Acknowledgements to wait for. */
  count: number;
  /** What is acknowledged, e.g. `rotations`. */
  what: string;
  /** How long to wait for them (default 60 s). */
  deadlineMs?: number | undefined;
}

/**
 * SIGKILLs `child` (asserted alive) once `kill.acksPath` holds `kill.count`
 * acknowledgements, and observes the journal mode it ran in on `kill.db` before anything
 * reopens it.
 *
 * @example
 * ```ts ignore
 * const child = ctx.spawn(ROTATOR, [db, acksPath, "0"]);
 * await killAfterAcks(ctx, child, { db, acksPath, count: 50, what: "rotations" });
 * ```
 */
export async function killAfterAcks(ctx: CellRun, child: Child, kill: AcksKill): Promise<void> {
  const { db, acksPath, count, what, deadlineMs = 60_000 } = kill;
  try {
    const waited = await waitFor(() => countAcks(acksPath) >= count, {
      what: `${count} acknowledged ${what}`,
      deadlineMs,
      children: [child],
      observed: () => `${countAcks(acksPath)} acknowledged`,
      progress: ctx.progress(() => countAcks(acksPath)),
    });
    ctx.note("killAfterMs", Math.round(waited));
    await killLanding(child, `the child after ${count} acknowledged ${what}`);
    tally(ctx, "sigkills", 1);
  } finally {
    await reapAll([child]);
  }
  ctx.observeLeg(db, `random kill after ${count} ${what}`);
}

/** How long {@linkcode untilExited} waits, and what it reports when time runs out. */
export interface ExitWait {
  /** How long to wait (default 30 s). */
  deadlineMs?: number;
  /** What the child had done, for the message when time runs out. */
  observed?: () => string;
}

/**
 * Waits (bounded) for `child` to exit on its own, then reaps it: a crash point or the
 * end of its work, never our kill.
 *
 * @example
 * ```ts ignore
 * await untilExited(sender, "the sender to reach its crash point");
 * ```
 */
export async function untilExited(
  child: Child,
  what: string,
  wait: ExitWait = {},
): Promise<void> {
  const { deadlineMs = 30_000, observed } = wait;
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
 * Whether the process is stopped (`/proc/<pid>/stat` state `T`, or `t` when a tracer such
 * as strace or a debugger holds it: it runs no code either), or `undefined` when this
 * process can read no `/proc` (not Linux, and no libc either).
 */
export function processStopped(pid: number): boolean | undefined {
  const stat = procText(`/proc/${pid}/stat`);
  if (stat === undefined) return undefined;
  const state = stat?.slice(stat.lastIndexOf(") ") + 2)[0];
  return state === "T" || state === "t";
}

/**
 * Waits (bounded) until `stopped()` holds, once a SIGSTOP was sent or raised: never seeing
 * the stop is the suite's failure (a `HarnessError`), not the store's; a watched child
 * that exits first fails the wait as {@linkcode waitFor} does.
 *
 * @param stopped Whether the processes are seen stopped.
 * @param options What is awaited, the children watched, the deadline (default 30 s).
 * @example
 * ```ts ignore
 * child.signal("SIGSTOP");
 * await untilStopped(() => processStopped(child.pid) !== false, { what: "the holder" });
 * ```
 */
export async function untilStopped(
  stopped: () => boolean,
  options: { what: string; children?: readonly Child[]; deadlineMs?: number },
): Promise<void> {
  const what = `${options.what} to be stopped (state T)`;
  const children = options.children ?? [];
  const deadlineMs = options.deadlineMs ?? 30_000;
  try {
    await waitFor(stopped, { what, deadlineMs, intervalMs: 1, children });
  } catch (error) {
    if (children.some((child) => child.exited !== undefined)) throw error;
    throw new HarnessError(
      `Cannot see ${options.what} stopped: its state was never T (or t) within ${deadlineMs} ms of the SIGSTOP`,
      { cause: error },
    );
  }
}

/**
 * SIGSTOPs `child` and waits (bounded) until it is seen stopped (state `T`): the signal is
 * asynchronous, so what the child did up to the stop is read only after this returns.
 *
 * @param child The child.
 * @param who Who it is in the wait's message, e.g. `the holder`.
 * @example
 * ```ts ignore
 * await stopChild(holder, "the holder");
 * ```
 */
export async function stopChild(child: Child, who: string): Promise<void> {
  child.signal("SIGSTOP");
  await untilStopped(() => processStopped(child.pid) !== false, {
    what: `${who} (pid ${child.pid})`,
    children: [child],
  });
}

/**
 * Whether process `pid` holds a POSIX lock that can block a writer on a file in `dir`
 * (`/proc/locks`), or `undefined` when that cannot be read. Any lock on the database or its
 * journal counts; on a WAL's `-shm`, only an exclusive one on the WAL lock bytes (120 to
 * 127), not the shared one every connection keeps on byte 128 while open. A stopped process
 * that holds none blocks nobody. A lock counts as free only once `reads` reads missed it (a
 * single read can miss one, see below): more than one where the answer is not read again.
 */
export function holdsLockIn(pid: number, dir: string, reads = 1): boolean | undefined {
  // Read by Deno alone, so `undefined` (counted as blocking: the stop ends after a grace)
  // under a cell's permissions; reading it through libc would change which stops are
  // waited for without one, a change not yet run across every store and leg.
  let files: Map<number, string>;
  try {
    files = new Map();
    // In folders too: a store may make its path a folder of its own files.
    for (const name of filesIn(dir)) files.set(Deno.statSync(`${dir}/${name}`).ino!, name);
  } catch {
    return undefined;
  }
  // The kernel writes /proc/locks a page per read, walking the list afresh from a count
  // each time: a lock another process drops between two reads shifts the rest, and one
  // line is skipped. A busy machine does that often enough that one read can miss a lock
  // that is held (about 1 in 23 under heavy lock traffic; three in a row, next to never).
  for (let read = 0; read < reads; read++) {
    let locks: string;
    try {
      locks = Deno.readTextFileSync("/proc/locks");
    } catch {
      return undefined;
    }
    const held = locks.split("\n").some((line) => {
      // "1: POSIX ADVISORY WRITE <pid> <major>:<minor>:<inode> <start> <end>"
      const [, , , type, owner, id, start] = line.trim().split(/\s+/);
      const name = files.get(Number(id?.split(":")[2]));
      if (owner !== String(pid) || name === undefined) return false;
      return !name.endsWith("-shm") || (type === "WRITE" && Number(start) < 128);
    });
    if (held) return true;
  }
  return false;
}

/** Where a child waits to be killed, and how long to wait for it to get there. */
export interface ReadyKill {
  /** The file the child creates once it got to the moment it waits in. */
  ready: string;
  /** What is awaited, for the wait's message. */
  what: string;
  /** How long to wait (default 60 s). */
  deadlineMs?: number;
}

/**
 * SIGKILLs `child` (asserted alive) once it has created `kill.ready`: the child got to the
 * moment the caller wants it killed in, and waits there. Fails at once, with its stderr,
 * when it dies first; reaps it either way.
 *
 * @example
 * ```ts ignore
 * await killWhenReady(child, { ready: `${dir}/ready`, what: "the holder to take the lock" });
 * ```
 */
export async function killWhenReady(child: Child, kill: ReadyKill): Promise<void> {
  const { ready, what, deadlineMs = 60_000 } = kill;
  try {
    await waitFor(() => exists(ready), { what, deadlineMs, children: [child] });
    await killLanding(child, `the child once ready (${what})`);
  } finally {
    await reapAll([child]);
  }
}

/** A {@linkcode ReadyKill} and where its journal mode is observed. */
export interface ObservedKill extends ReadyKill {
  /** The database the child writes. */
  db: string;
  /** When, for the observation, e.g. `killed after the first acknowledged fork`. */
  at: string;
}

/**
 * {@linkcode killWhenReady}, counted as a SIGKILL, then observes the journal mode the
 * child ran in on `kill.db` at `kill.at`. Not as at rest: a store that acknowledges before
 * COMMIT has a transaction open when it is killed after its acknowledgement.
 *
 * @example
 * ```ts ignore
 * await killReadyAndObserve(ctx, holder, {
 *   ready,
 *   what: "the holder to take the compression lock",
 *   db,
 *   at: "dead holder (waiting with the lock)",
 * });
 * ```
 */
export async function killReadyAndObserve(
  ctx: CellRun,
  child: Child,
  kill: ObservedKill,
): Promise<void> {
  await killWhenReady(child, kill);
  tally(ctx, "sigkills", 1);
  ctx.observeLeg(kill.db, kill.at);
}

/** A write `children/last_write.ts` makes: a store method it knows, on a session. */
export interface LastWrite {
  /** The method. */
  method:
    | "createSession"
    | "appendMessage"
    | "recordObligation"
    | "requestHandoff"
    | "claimHandoff";
  /** The session it is called on. */
  session: string;
}

/** The writes {@linkcode killAfterLastWrite} has made, and what it does between them. */
export interface LastWritePlan {
  /** The writes, in order; the child is killed right after the last is acknowledged. */
  writes: readonly LastWrite[];
  /** Looks at each answer but the last from this process before the next write. */
  between?: (answer: unknown, i: number) => Promise<void>;
  /** How long each wait may take (default 60 s). */
  deadlineMs?: number;
}

/**
 * Runs `children/last_write.ts` over `plan.writes`: the child makes each, journals the
 * store's answer and, before the next, waits until `plan.between(answer, i)` has looked at
 * it from this process (an acknowledged write is visible to every other process at once).
 * After the last it is SIGKILLed (asserted alive) with nothing written after it, so that
 * write must be durable the instant it was acknowledged (a store that commits it only at
 * the next write or at close loses it). Observes the journal mode it ran in, counts the
 * kill and the acknowledgements, and returns the store's answers.
 *
 * @example
 * ```ts ignore
 * const [created] = await killAfterLastWrite(ctx, db, {
 *   writes: [{ method: "createSession", session: "s1" }],
 * });
 * ```
 */
export async function killAfterLastWrite(
  ctx: CellRun,
  db: string,
  plan: LastWritePlan,
): Promise<unknown[]> {
  const { writes, between = () => Promise.resolve(), deadlineMs = 60_000 } = plan;
  const last = writes.at(-1)!;
  const stem = ctx.run.file(`last-${last.method}-${last.session}`);
  const acks = `${stem}.jsonl`;
  const child = ctx.spawn(LAST_WRITE, [
    db,
    acks,
    `${stem}.ready`,
    ...writes.map((w) => `${w.method}:${w.session}`),
  ]);
  const what = (w: LastWrite) => `${w.method}("${w.session}") acknowledged`;
  const answers = () => readAckJournal<{ answer: unknown }>(acks).map((ack) => ack.answer);
  try {
    for (const [i, write] of writes.slice(0, -1).entries()) {
      await waitFor(() => countAcks(acks) > i, {
        what: what(write),
        deadlineMs,
        children: [child],
      });
      await between(answers()[i], i);
      releaseBarrier(`${stem}.ready.${i}`);
    }
  } catch (error) {
    await reapAll([child]);
    throw error;
  }
  await killReadyAndObserve(ctx, child, {
    ready: `${stem}.ready`,
    what: what(last),
    db,
    at: `killed after ${what(last)}`,
    deadlineMs,
  });
  tally(ctx, "acknowledgedOps", writes.length);
  return answers();
}

/** What {@linkcode killAfterLastWriteThenRead} found: the answers and the read, or the failure. */
export interface LastWriteRead<T> {
  /** The store's answers to the writes (none when they failed). */
  answers: unknown[];
  /** What a fresh open read of the file the kill left (nothing when the writes failed). */
  read?: T;
  /** Why the writes failed, for the step that judges them to throw. */
  failed?: unknown;
}

/**
 * {@linkcode killAfterLastWrite}, then `read` through a fresh open of the file it left. A
 * failure of the writes is returned, not thrown, and nothing is read.
 *
 * @example
 * ```ts ignore
 * const { answers, read, failed } = await killAfterLastWriteThenRead(ctx, db, {
 *   writes: [{ method: "requestHandoff", session: "D" }, { method: "claimHandoff", session: "D" }],
 *   read: (store) => store.getHandoffState!("D"),
 * });
 * ```
 */
export async function killAfterLastWriteThenRead<T>(
  ctx: CellRun,
  db: string,
  plan: LastWritePlan & { read: (store: Store) => Promise<T> },
): Promise<LastWriteRead<T>> {
  let answers: unknown[];
  try {
    answers = await killAfterLastWrite(ctx, db, plan);
  } catch (failed) {
    return { answers: [], failed };
  }
  return { answers, read: await withStore(ctx.target, db, plan.read) };
}

/** Where {@linkcode awaitCrash}'s child was armed to die. */
export interface ArmedCrash {
  /** The crash point (`SESSION_DB_CRASH_AT`). */
  point: string;
  /** The database the child writes. */
  db: string;
  /** The child's acknowledgement journal, for the message when time runs out. */
  acksPath: string;
}

/**
 * Waits (bounded) for a child armed with `SESSION_DB_CRASH_AT` to die, reaps it, and
 * counts the SIGKILL; the caller asserts it died at the point.
 *
 * @example
 * ```ts ignore
 * const crasher = ctx.spawn(ROTATOR, [db, acksPath, "0"], {
 *   env: { SESSION_DB_CRASH_AT: `${point}@2` },
 * });
 * const killed = await awaitCrash(ctx, crasher, { point, db, acksPath });
 * ```
 */
export async function awaitCrash(
  ctx: CellRun,
  crasher: Child,
  crash: ArmedCrash,
): Promise<boolean> {
  const { point, db, acksPath } = crash;
  await untilExited(crasher, `the child to reach crash point ${point}`, {
    observed: () => `${countAcks(acksPath)} acknowledged`,
  });
  const killed = classifyExit(crasher.exited!).kind === "killed";
  tally(ctx, "sigkills", killed ? 1 : 0);
  if (killed) ctx.observeLeg(db, point);
  return killed;
}

/** A child {@linkcode crashAtPoint} arms to die at a crash point. */
export interface PointCrash {
  /** The crash point. */
  point: string;
  /** Which time it dies there (`SESSION_DB_CRASH_AT=<point>@<nth>`). */
  nth: number;
  /** The child script. */
  script: URL;
  /** Its arguments after the target, given its database and journal. */
  args: (files: { db: string; acksPath: string }) => string[];
  /** Its journal's suffix after the database's name (default `acks.jsonl`). */
  journal?: string;
  /** What the child is called in the step's name (default `child`). */
  who?: string;
  /** More assertions of the step, once it died, on its files. */
  check?: (files: { db: string; acksPath: string }) => void;
}

/**
 * Spawns a child on a database of its own (named after the point) armed to die at
 * `crash.point`, waits for it, and asserts in a step that it died there by SIGKILL.
 *
 * @example
 * ```ts ignore
 * const files = await crashAtPoint({ ctx, t }, {
 *   point: "publishCompressionChild:afterCommit",
 *   nth: 2,
 *   script: ROTATOR,
 *   args: ({ db, acksPath }) => [db, acksPath, "0"],
 * });
 * ```
 */
export async function crashAtPoint(
  cell: { ctx: CellRun; t: Deno.TestContext },
  crash: PointCrash,
): Promise<{ db: string; acksPath: string }> {
  const { ctx, t } = cell;
  const { point, nth, journal = "acks.jsonl", who = "child" } = crash;
  const name = point.replace(/\W/g, "_");
  const files = { db: ctx.run.store(name), acksPath: ctx.run.file(`${name}.${journal}`) };
  const crasher = ctx.spawn(crash.script, crash.args(files), {
    env: { SESSION_DB_CRASH_AT: `${point}@${nth}` },
  });
  const killed = await awaitCrash(ctx, crasher, { point, ...files });
  await t.step(`${point}: the ${who} died there by SIGKILL`, () => {
    ok(killed, crasher.describe());
    crash.check?.(files);
  });
  return files;
}
