// The walk shared by the stop series (cell 7's fenced writes, cell 5's guarded writes):
// stop the actor before lock call k = 1, 2, … of its operation until it completes before
// the k-th, fail a step on the first violation, and require that a competing move landed
// during at least one stop (else nothing was judged: a HarnessError).
import { HarnessError } from "../../harness/harness_error.ts";
import type { CellRun } from "../engine/cell.ts";

/** One stop: whether the actor stopped, whether the move raced it, and what broke. */
export interface StopResult {
  stopped: boolean;
  /** The competitor moved while the actor was stopped, before its write landed. */
  raced: boolean;
  violation?: string;
}

/** What a walk is called in notes, steps and messages. */
export interface StopWalkNames {
  /** The evidence note's key, e.g. `stopSeries.markDelivered`. */
  key: string;
  /** The store method the actor is stopped in. */
  write: string;
  /** What the walk shows. */
  what: string;
  /** Who moves while the actor is stopped, e.g. `the new owner`. */
  mover: string;
}

/** Walks one operation's lock calls with `stopAt(k)`; notes and judges the walk. */
export async function walkLockStops(
  ctx: CellRun,
  t: Deno.TestContext,
  names: StopWalkNames,
  stopAt: (k: number) => Promise<StopResult>,
  maxStops = 100,
): Promise<void> {
  const { key, write, what, mover } = names;
  let stops = 0;
  let raced = 0;
  let completed = false;
  for (let k = 1; k <= maxStops; k++) {
    const result = await stopAt(k);
    if (!result.stopped) {
      completed = true;
      break;
    }
    stops++;
    if (result.raced) raced++;
    if (result.violation) {
      await t.step(`${write} stopped at lock call ${k}: ${what}`, () => {
        throw new Error(result.violation);
      });
      return;
    }
  }
  ctx.note(key, { stops, movedWhileStopped: raced, complete: completed });
  console.log(
    `  stop series ${key}: ${stops} stop(s) inside ${write}, ${mover} moved while stopped at ${raced}`,
  );
  await t.step(`${write}, ${what}: a move landed during a stop`, () => {
    if (raced === 0) {
      throw new HarnessError(
        `no move of ${mover} committed while the actor was stopped inside ${write} (${stops} stops): the interleave never happened, nothing was judged`,
      );
    }
  });
}

/** A child's JSON report, once whole (its last line ends), else `undefined`. */
export function readReport<T>(path: string): T | undefined {
  try {
    const text = Deno.readTextFileSync(path);
    return text.endsWith("\n") ? JSON.parse(text) as T : undefined;
  } catch {
    return undefined;
  }
}
