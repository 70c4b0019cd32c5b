// Races without crash points: a kill cannot tell an operation that commits its checks
// and acts in a second transaction from one that does both atomically; a writer acting
// between the two can. For k = 1, 2, … an actor child is stopped (SIGSTOP, through the
// LD_PRELOAD recorder) just before the k-th lock call of one operation, a racer child
// (store already open) is released by a barrier and acts once, then the actor is
// continued, and the pair's outcome is judged against every order of an atomic store.
// The walk ends when the operation completes before its k-th lock call.
import { releaseBarrier } from "../../harness/barrier.ts";
import { type Child, reapAll } from "../../harness/child.ts";
import { WaitError, waitFor } from "../../harness/wait_for.ts";
import { exists } from "../../internal/fs.ts";
import type { CellRun } from "../engine/cell.ts";
import { seriesEnv, seriesRecorder } from "./kill_series.ts";
import { processStopped, untilStopped } from "./kill.ts";
import { openTargetStore } from "../contract/target.ts";
import { RACE_CHILD } from "./_children.ts";
import { heldOut, refusalEnv, refusedFileOf } from "./_held_out.ts";

/** Whether cells 3 and 4 run the race series: at lock calls, or not at all. */
export type RaceSeries = "locks" | "off";

/** An operation the race series walks, and what its racer does. */
export type RaceOp = "rewindToMessage" | "publishCompressionChild";

/** How long the racer may take while the actor is stopped; past it the actor goes on. */
const RACER_GRACE_MS = 1_000;
const DEADLINE_MS = 60_000;
/** The session both children work on. */
const RACE_SESSION = "race";

/** The series' setting: the option, else `CELLS_RACE_SERIES` (`locks`, `off`), else off. */
export function raceSeriesOf(option?: RaceSeries): RaceSeries {
  const value = option ?? Deno.env.get("CELLS_RACE_SERIES") ?? "off";
  if (value === "locks" || value === "off") return value;
  throw new Error(`Invalid CELLS_RACE_SERIES "${value}": use locks or off`);
}

type Outcome = { ok: boolean; error?: string; [key: string]: unknown };
function readOutcome(path: string): Outcome | undefined {
  return exists(path) ? JSON.parse(Deno.readTextFileSync(path)) as Outcome : undefined;
}

/**
 * Why the pair's outcome is impossible for an atomic store, or `undefined`. A rewind
 * acknowledged with the racer's acknowledged append inactive: its compare-and-swap never
 * held that row. A publish acknowledged after the racer took the lock over and saw the
 * parent still open: the publish committed while another holder held the lock.
 */
async function violation(
  ctx: CellRun,
  op: RaceOp,
  db: string,
  actor: Outcome,
  racer: Outcome,
): Promise<string | undefined> {
  if (!actor.ok || !racer.ok) return undefined;
  if (op === "publishCompressionChild") {
    return racer.acquired === true && racer.parentOpen === true
      ? "the publish was acknowledged although another holder took its lock over, and saw the parent open, before it committed"
      : undefined;
  }
  const store = await openTargetStore(ctx.target, db);
  try {
    const rows = await store.getMessages(RACE_SESSION, { includeInactive: true });
    const row = rows.find((r) => r.id === racer.id);
    if (!row) return `the racer's acknowledged append ${racer.id} is gone`;
    return row.active === false
      ? `the rewind (expected ids ${
        JSON.stringify(actor.ids)
      }) was acknowledged and deactivated the racer's acknowledged append ${racer.id}, which its compare-and-swap never held`
      : undefined;
  } finally {
    await store.close();
  }
}

/** One race: whether the operation completed first, and what each child reported. */
interface Race {
  /** The operation completed before lock call k: every lock call was walked. */
  completed: boolean;
  /** The racer acted while the actor was stopped. */
  raced: boolean;
  /** The actor, when it failed before lock call k. */
  failed?: string;
  /** What each child reported (`undefined`: nothing). */
  actor?: Outcome | undefined;
  racer?: Outcome | undefined;
  db: string;
}

/** Spawns the racer, its store opened, and the actor armed to stop before lock call k. */
async function startPair(
  ctx: CellRun,
  race: { op: RaceOp; k: number; dir: string; library: string },
  children: Child[],
): Promise<{ actor: Child; racer: Child }> {
  const { op, k, dir } = race;
  const role = op === "rewindToMessage" ? "rewind" : "publish";
  // Each child writes its outcome to <dir>/<who>.json.
  const start = (who: "racer" | "actor", env?: Record<string, string>) => {
    const args = [`${dir}/db/store.db`, `${role}-${who}`, `${dir}/${who}.json`, `${dir}/go`];
    const child = ctx.spawn(RACE_CHILD, [...args, RACE_SESSION], env ? { env } : {});
    children.push(child);
    return child;
  };
  // The recorder notes a lock call the racer is refused: held out by the stopped actor.
  const racer = start("racer", refusalEnv(race.library, { dir, who: "racer" }));
  await waitFor(() => exists(`${dir}/racer.json.ready`), {
    what: "the racer to open the store",
    deadlineMs: DEADLINE_MS,
    children: [racer],
  });
  const stopFile = `${dir}/stopped`;
  const actor = start(
    "actor",
    seriesEnv(race.library, dir, { stopAt: k, stopFile, armAfterMarks: 1 }),
  );
  // The recorder creates the stop file just before the SIGSTOP: from then on the
  // actor's thread makes no call but the signal's, so its lock call waits for us.
  await waitFor(() => actor.exited !== undefined || exists(stopFile), {
    what: `${op} to stop before lock call ${k} or finish`,
    deadlineMs: DEADLINE_MS,
    children: [racer],
  });
  if (actor.exited === undefined) {
    // Where /proc may be read, the stop itself is seen too.
    await untilStopped(() => processStopped(actor.pid) !== false, {
      what: `the actor (pid ${actor.pid})`,
      deadlineMs: DEADLINE_MS,
    });
  }
  return { actor, racer };
}

/** One race at lock call k: the racer released while the actor is stopped there. */
async function raceAt(ctx: CellRun, op: RaceOp, k: number, library: string): Promise<Race> {
  const dir = ctx.run.file(`race-${op}-${k}`);
  await Deno.mkdir(`${dir}/db`, { recursive: true });
  const db = `${dir}/db/store.db`;
  const go = `${dir}/go`;
  const children: Child[] = [];
  try {
    const { actor, racer } = await startPair(ctx, { op, k, dir, library }, children);
    const held = heldOut(refusedFileOf({ dir, who: "racer" }));
    releaseBarrier(go);
    if (actor.exited !== undefined) {
      await waitFor(() => racer.exited !== undefined, {
        what: "the racer to finish",
        deadlineMs: DEADLINE_MS,
      });
      return {
        completed: true,
        raced: false,
        db,
        ...(actor.exited.code !== 0 ? { failed: `the actor failed: ${actor.describe()}` } : {}),
      };
    }
    let raced = false;
    try {
      await waitFor(() => exists(`${dir}/racer.json`) || held(), {
        what: "the racer to act while the actor is stopped",
        deadlineMs: RACER_GRACE_MS,
        intervalMs: 2,
      });
      raced = exists(`${dir}/racer.json`);
    } catch (error) {
      // Blocked by a lock the stopped actor holds: it acts once the actor goes on.
      if (!(error instanceof WaitError)) throw error;
    }
    actor.signal("SIGCONT");
    await waitFor(() => actor.exited !== undefined && racer.exited !== undefined, {
      what: `the actor and the racer to finish after stop ${k}`,
      deadlineMs: DEADLINE_MS,
      observed: () => `actor ${actor.describe()}; racer ${racer.describe()}`,
    });
    const outcomes = {
      actor: readOutcome(`${dir}/actor.json`),
      racer: readOutcome(`${dir}/racer.json`),
    };
    return { completed: false, raced, db, ...outcomes };
  } finally {
    // Never leaves a child behind, stopped or not (SIGKILL ends a stopped process).
    await reapAll(children);
  }
}

/**
 * Walks the lock calls of `op` (its first occurrence in a fresh actor) with a racer
 * released at each stop, and fails a step on an outcome no order of an atomic store
 * gives. Notes how many stops landed inside the operation. The one race primitive: unlike
 * the stops of `stop_at_lock.ts`, it judges whichever order its racer reached within a
 * fixed grace, and requires no move to have landed during a stop.
 *
 * @param ctx The cell's run.
 * @param t The test context the steps are taken in.
 * @param op The operation the actor is stopped in.
 * @example
 * ```ts ignore
 * import { raceSeries } from "./race.ts";
 * await raceSeries(ctx, t, "rewindToMessage");
 * ```
 */
export async function raceSeries(ctx: CellRun, t: Deno.TestContext, op: RaceOp): Promise<void> {
  const library = await seriesRecorder(`race series for ${op}`);
  const key = `raceSeries.${op}`;
  const maxStops = 100;
  let stops = 0;
  let racedWhileStopped = 0;
  let completed = false;
  for (let k = 1; k <= maxStops && !completed; k++) {
    const race = await raceAt(ctx, op, k, library);
    if (race.completed) {
      completed = true;
      if (race.failed) {
        await t.step(`${op} race series: the actor ran to its end`, () => {
          throw new Error(race.failed);
        });
      }
      break;
    }
    stops++;
    if (race.raced) racedWhileStopped++;
    if (!await judgeRace(ctx, t, { op, k, race })) return;
  }
  ctx.note(key, { stops, racedWhileStopped, complete: completed });
  console.log(
    `  race series: ${stops} stop(s) inside ${op}, the racer done while stopped at ${racedWhileStopped}${
      completed ? "" : `, stopped at ${maxStops}`
    }`,
  );
}

/** Judges one race in steps; whether the walk goes on. */
async function judgeRace(
  ctx: CellRun,
  t: Deno.TestContext,
  { op, k, race }: { op: RaceOp; k: number; race: Race },
): Promise<boolean> {
  const { actor, racer } = race;
  const label = `${op} stopped before lock call ${k}, a racer acting`;
  if (!actor || !racer) {
    await t.step(`${label}: both children reported`, () => {
      throw new Error(`actor ${JSON.stringify(actor)}, racer ${JSON.stringify(racer)}`);
    });
    return false;
  }
  ctx.observeLeg(race.db, label);
  const found = await violation(ctx, op, race.db, actor, racer);
  if (!found) return true;
  await t.step(`${label}: an outcome no order of an atomic ${op} gives`, () => {
    throw new Error(`${found} (actor ${JSON.stringify(actor)}, racer ${JSON.stringify(racer)})`);
  });
  return false;
}
