// Cell 12's kill series: a child makes a fixed sequence of handoff operations and is killed
// before each file-system call (the LD_PRELOAD recorder) of a re-request after a failure
// and of a claim; every crash state is judged and resumed. (One walk per operation name: the
// series' folders are named by operation and call.)
import { readAckJournal } from "../../harness/ack_journal.ts";
import type { CellRun } from "../engine/cell.ts";
import { killSeries, type SeriesKind } from "../moves/kill_series.ts";
import type { HandoffEntry } from "./judge.ts";
import { judgeLife, resumeLife } from "./_life.ts";
import type { HandoffRead } from "./_read.ts";
import { HANDOFFS } from "./_children.ts";

/** The walked operations: which marked operation of the script (1-based), and its name. */
const WALKED = [
  { op: "requestHandoff", occurrence: 4, what: "re-request after a failure" },
  { op: "claimHandoff", occurrence: 6, what: "claim" },
] as const;

/**
 * Walks each operation of {@linkcode WALKED}; every crash state is judged like a round's,
 * then resumed. Without the recorder the series is noted as not run.
 *
 * @param ctx The cell's run.
 * @param t The test context.
 * @param kind Which calls the series kills before.
 * @example
 * ```ts ignore
 * import { handoffSeries } from "./series.ts";
 * await handoffSeries(ctx, t, "sync");
 * ```
 */
export async function handoffSeries(
  ctx: CellRun,
  t: Deno.TestContext,
  kind: SeriesKind,
): Promise<void> {
  // What each crash state read, for its resume (by the state's folder).
  const reads = new Map<string, HandoffRead>();
  for (const walked of WALKED) {
    await killSeries(ctx, t, {
      op: walked.op,
      occurrence: walked.occurrence,
      script: HANDOFFS,
      args: (db, dir) => [db, "script", `${dir}/script`],
      kind,
      async check(db, dir, label) {
        const entries = readAckJournal<HandoffEntry>(`${dir}/script.jsonl`);
        const name = `${label} (${walked.what})`;
        const read = await judgeLife(ctx, t, {
          label: name,
          db,
          start: { A: null, B: null },
          entries,
        });
        if (read) reads.set(dir, read);
      },
      async resume(db, dir, label) {
        const read = reads.get(dir);
        if (read) await resumeLife(ctx, t, { label: `${label} (${walked.what})`, db, read });
      },
    });
  }
}
