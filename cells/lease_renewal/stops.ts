// Cell 11 (c): the stop series. The holder is stopped before each lock call inside its
// renewal (through the LD_PRELOAD recorder) while another process, once the lease lapsed,
// takes the lock over; a renewal acknowledged after a takeover that committed during the
// stop was checked before the stop: a FAIL. At least one takeover must land during a stop.
import { HarnessError } from "../../harness/harness_error.ts";
import { exists } from "../../internal/fs.ts";
import type { CellRun } from "../engine/cell.ts";
import { seriesRecorder } from "../moves/kill_series.ts";
import {
  competitorWalkNames,
  readReport,
  stopBeforeLockCall,
  type StopResult,
  walkLockStops,
} from "../moves/stop_at_lock.ts";
import { type Answer, describeAnswer, verdict } from "../contract/typed.ts";
import { withStore } from "../contract/with_store.ts";
import { staleRenewalProblem } from "./judge.ts";
import { recovered } from "./_read_back.ts";
import { HOLDER } from "./_children.ts";

const SESSION = "renewed";

/** What the new holder reported once it acted. */
interface Owner {
  took: boolean;
  published: Answer;
  released: Answer;
}

/** Why a stop that interleaved breaks the clause, from what the children reported. */
function stopProblems(stale: Answer, owner: Owner): string[] {
  const problems: string[] = [];
  const refused = staleRenewalProblem(stale);
  if (refused) problems.push(refused);
  for (const [what, answer] of [["publish", owner.published], ["release", owner.released]]) {
    const a = answer as Answer;
    if (verdict(a) !== "accepted") {
      problems.push(`the new holder's ${what} was refused afterwards (${describeAnswer(a)})`);
    }
  }
  return problems;
}

/** Judges one stop: the interleave, then the renewal and the new holder's work; every state read twice. */
async function judgeStop(
  ctx: CellRun,
  stop: { label: string; dir: string; movedInTime: boolean },
): Promise<{ raced: boolean; violation?: string }> {
  const { label, dir } = stop;
  const stale = readReport<Answer>(`${dir}/holder.result`);
  const owner = readReport<Owner>(`${dir}/holder.owner`);
  if (!stale || !owner) {
    throw new HarnessError(`${label}: the children did not report (${stale}, ${owner})`);
  }
  const raced = stop.movedInTime && owner.took;
  const problems = raced ? stopProblems(stale, owner) : [];
  const { problems: read } = await recovered(ctx.target, `${dir}/db/store.db`);
  problems.push(...read);
  if (!problems.length) return { raced };
  const why = raced
    ? ", although the new holder's takeover committed while the holder was stopped inside its renewal, after its lease lapsed (the holder was checked before the stop)"
    : "";
  return { raced, violation: `${problems.join("; ")}${why}` };
}

/** One stop before lock call `k` of the renewal. */
function stopAt(
  ctx: CellRun,
  k: number,
  run: { library: string; leaseMs: number },
): Promise<StopResult> {
  const dir = ctx.run.file(`stop-refresh-${k}`);
  const prefix = `${dir}/holder`;
  const label = `refreshCompressionLock stopped before lock call ${k}`;
  const spawn = (mode: "actor" | "taker", env?: Record<string, string>) =>
    ctx.spawn(
      HOLDER,
      [`${dir}/db/store.db`, mode, prefix, SESSION, String(run.leaseMs)],
      env ? { env } : {},
    );
  return stopBeforeLockCall(ctx, {
    k,
    label,
    dir,
    library: run.library,
    setup: (db) =>
      withStore(ctx.target, db, async (store) => {
        await store.createSession(SESSION);
        await store.appendMessage(SESSION, { role: "user", content: "work before the renewal" });
      }),
    actors: {
      what: "the holder",
      spawn: (env) => spawn("actor", env),
      checkStop() {
        if (!exists(`${prefix}.acquired`)) {
          throw new HarnessError(`${label}: the holder stopped before its renewal`);
        }
      },
    },
    competitor: {
      what: "the new holder",
      spawn: (env) => [spawn("taker", env)],
      ready: () => exists(`${prefix}.ready`),
      go: `${prefix}.go`,
      took: () => exists(`${prefix}.took`),
    },
    judge: ({ movedInTime }) => judgeStop(ctx, { label, dir, movedInTime }),
  });
}

/**
 * Cell 11 (c): walks the renewal's lock calls, the new holder taking over at each stop once
 * the lease lapsed. Without the recorder the series is noted as not run.
 *
 * @param ctx The cell's run.
 * @param t The test context.
 * @param leaseMs The holder's lease.
 * @example
 * ```ts ignore
 * import { renewalStops } from "./stops.ts";
 * await renewalStops(ctx, t, 300);
 * ```
 */
export async function renewalStops(
  ctx: CellRun,
  t: Deno.TestContext,
  leaseMs: number,
): Promise<void> {
  const key = "stopSeries.refreshCompressionLock";
  const library = await seriesRecorder("stop series refreshCompressionLock");
  await walkLockStops(ctx, t, {
    names: competitorWalkNames({
      key,
      write: "refreshCompressionLock",
      what: "a renewal after its lease lapsed and another holder took over",
      mover: "the new holder",
    }),
    stopAt: (k) => stopAt(ctx, k, { library, leaseMs }),
  });
}
