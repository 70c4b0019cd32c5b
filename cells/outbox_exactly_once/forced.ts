// Cell 5's concurrent rebooters under the worst case, forced: three or more sweepers over
// the same dead owner's obligations, each held just before its first write inside the
// sweep (the LD_PRELOAD recorder stops it there: it has read, it has not claimed) until
// every other one has read too, or is refused a lock by a held one (a store that reads
// under its write lock admits no worse order). Then all go on. The cell verifies the
// order happened; without the recorder it says so and releases them together.
import { procText } from "../../harness/_proc.ts";
import { countAcks } from "../../harness/ack_journal.ts";
import { releaseBarrier } from "../../harness/barrier.ts";
import type { Child } from "../../harness/child.ts";
import { WaitError, waitFor } from "../../harness/wait_for.ts";
import { exists } from "../../internal/fs.ts";
import { recorderEnv } from "../../recorder/record.ts";
import type { CellRun } from "../engine/cell.ts";
import { OP_MARKS_ENV, seriesRecorder } from "../moves/kill_series.ts";
import { RECOVERER } from "./_children.ts";

/** One sweeper's signal files. */
interface Hold {
  /** Created by the recorder just before it stops the sweeper (its first write). */
  stop: string;
  /** Created when one of its lock calls was refused inside the sweep. */
  refused: string;
  /** The sweep's marks (two once it returned). */
  marks: string;
}

/** Sweepers spawned for a forced race. */
export interface Sweepers {
  children: Child[];
  /** Their holds. */
  holds: Hold[];
}

/** How the forced race went. */
export interface ForcedRace {
  /** Sweepers held after their read, before any write. */
  held: number;
  /** Sweepers refused a lock while another was held (they could not read before it wrote). */
  heldOut: number;
  /** Sweepers whose sweep returned without a write, before any was let go. */
  finished: number;
  /** Sweepers that reached none of those by the deadline (the order was not shown). */
  unreached: string[];
}

/** What {@linkcode spawnSweepers} spawns, and where. */
export interface SweeperPlan {
  /** The folder of their signal files. */
  dir: string;
  /** The folder the database is in (what the recorder watches). */
  dbDir: string;
  /** How many. */
  count: number;
  /** The arguments of the recoverer named `name` (`r0`, `r1`, …). */
  args: (name: string) => string[];
}

/**
 * Spawns `plan.count` recoverers on the database in `plan.dbDir`, each held before its
 * first write inside its sweep when the recorder is available.
 *
 * @example
 * ```ts ignore
 * const sweepers = await spawnSweepers(ctx, {
 *   dir,
 *   dbDir: `${dir}/db`,
 *   count: 3,
 *   args: (name) => [db, inbox, dir, name, barrier, "0"],
 * });
 * const forced = await raceForced(sweepers, barrier);
 * ```
 */
export async function spawnSweepers(ctx: CellRun, plan: SweeperPlan): Promise<Sweepers> {
  const { dir, dbDir, count, args } = plan;
  const library = await seriesRecorder("forced race of cell 5's recoverers");
  const children: Child[] = [];
  const holds: Hold[] = [];
  for (let i = 0; i < count; i++) {
    const name = `r${i}`;
    const hold = {
      stop: `${dir}/hold-${name}.stopped`,
      refused: `${dir}/hold-${name}.refused`,
      marks: `${dir}/hold-${name}.marks.jsonl`,
    };
    holds.push(hold);
    const env = {
      ...recorderEnv({
        library,
        watched: dbDir,
        log: `${dir}/hold-${name}.fsrec.log`,
        mark: hold.marks,
        armAfterMarks: 1,
        stopAt: 1,
        stopKind: "write",
        stopFile: hold.stop,
        refusedFile: hold.refused,
      }),
      [OP_MARKS_ENV]: hold.marks,
    };
    children.push(ctx.spawn(RECOVERER, args(name), { env }));
  }
  return { children, holds };
}

function describeHold(child: Child, hold: Hold, continued: boolean): string {
  const stat = procText(`/proc/${child.pid}/stat`);
  const state = stat === null
    ? "gone"
    : stat === undefined
    ? "unreadable"
    : stat.slice(stat.lastIndexOf(") ") + 2)[0] ?? "?";
  const signals = [
    exists(hold.stop) ? "held" : "",
    exists(hold.refused) ? "refused" : "",
    continued ? "continued" : "",
  ].filter(Boolean).join(", ");
  return `${child.describe()} (state ${state}; ${countAcks(hold.marks)} marks; ${signals})`;
}

/**
 * Releases the sweepers (`barrier`), holds each after its read until all have read or are
 * held out by a held one's lock, then lets every one go (and any that stops later) and
 * waits for all to exit.
 */
export async function raceForced(sweepers: Sweepers, barrier: string): Promise<ForcedRace> {
  const { children, holds } = sweepers;
  releaseBarrier(barrier);
  const done = () => children.every((c) => c.exited !== undefined);
  // Once the stop file exists the sweeper makes no call but its own SIGSTOP: it has not
  // written, and will not until it is continued.
  const isHeld = (i: number) => exists(holds[i]!.stop) && children[i]!.exited === undefined;
  const isFinished = (i: number) =>
    children[i]!.exited !== undefined || countAcks(holds[i]!.marks) >= 2;
  const reached = (i: number) => isHeld(i) || isFinished(i) || exists(holds[i]!.refused);
  const unreached: string[] = [];
  try {
    await waitFor(() => children.every((_, i) => reached(i)), {
      what: "every sweeper to read (held before its first write) or be held out by a lock",
      deadlineMs: 30_000,
      intervalMs: 2,
      observed: () =>
        children.map((_, i) => `r${i}: ${reached(i) ? "reached" : "running"}`).join(", "),
    });
  } catch (error) {
    if (!(error instanceof WaitError)) throw error;
    unreached.push(...children.flatMap((c, i) => reached(i) ? [] : [`r${i} (${c.describe()})`]));
  }
  const held = children.filter((_, i) => isHeld(i)).length;
  const finished = children.filter((_, i) => isFinished(i)).length;
  const heldOut =
    children.filter((_, i) => !isHeld(i) && !isFinished(i) && exists(holds[i]!.refused)).length;
  // Every held one goes on, and so does any held later (a sweeper held out at first
  // reaches its own first write after the others committed). SIGCONT is sent until its
  // sweep returns: one that came before the SIGSTOP landed would leave it stopped.
  const continued = new Set<number>();
  await waitFor(() => {
    for (const [i, child] of children.entries()) {
      if (child.exited !== undefined || !exists(holds[i]!.stop)) continue;
      if (countAcks(holds[i]!.marks) >= 2) continue;
      continued.add(i);
      child.signal("SIGCONT");
    }
    return done();
  }, {
    what: "the racing recoverers to finish",
    deadlineMs: 60_000,
    intervalMs: 10,
    observed: () => children.map((c, i) => describeHold(c, holds[i]!, continued.has(i))).join("; "),
  });
  return { held, heldOut, finished, unreached };
}
