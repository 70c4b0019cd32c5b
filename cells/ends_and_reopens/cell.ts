import { ok } from "node:assert/strict";
import { AckWriter, countAcks, readAckJournal } from "../../harness/ack_journal.ts";
import { classifyExit, reapAll } from "../../harness/child.ts";
import { waitFor } from "../../harness/wait_for.ts";
import { type CellRun, defineCell } from "../engine/cell.ts";
import type { CellOptions } from "../engine/options.ts";
import { checkSteps, soundness } from "../engine/state_check.ts";
import { startTallies, tally } from "../engine/tally.ts";
import { killLanding } from "../moves/kill.ts";
import { killSeries, seriesKind } from "../moves/kill_series.ts";
import type { CycleEntry } from "./cycles.ts";
import { type CycledState, judgeCycled } from "./judge.ts";
import { races } from "./race.ts";
import { racerSeries } from "./ensure_series.ts";
import { raceSeriesOf } from "../moves/race.ts";
import { CYCLER } from "./_children.ts";
import { probeAppends, readPass } from "./_reads.ts";

/**
 * Options of {@linkcode endsAndReopensCell}.
 *
 * @example
 * ```ts
 * import { endsAndReopensCell, type EndsAndReopensOptions } from "./cell.ts";
 * const options: EndsAndReopensOptions = {
 *   target: new URL("../reference_target.ts", import.meta.url),
 *   racers: 16,
 * };
 * for (const test of await endsAndReopensCell(options)) Deno.test(test);
 * ```
 */
export interface EndsAndReopensOptions extends CellOptions {
  /** Processes racing `ensureSession` (default 8). */
  racers?: number;
  /** Ensure races, each on a new session (default 3). */
  raceRounds?: number;
}

/**
 * Cell 10, ends and reopens. A child cycles one session through append, `endSession`, a
 * second `endSession`, an append while ended and `reopenSession`, journaling each call and
 * answer, and is SIGKILLed right after an end, right after a reopen, right after the
 * append that follows, at a random moment, and (through the recorder) at each file-system
 * call inside an end and inside a reopen. Each recovered state, read from fresh processes:
 * the answers were the contract's (`true`, then `false` for a second end, a
 * `SessionEndedError` for the append while ended, `true` for the reopen, the append after
 * it taken); an acknowledged end or reopen survives; one state or the other (ended and
 * refusing an append with the typed error, or open and taking it), never half; the first
 * reason stays; no refused append left a row; recovery deterministic, integrity,
 * invariants; and a fresh child continues the state and is killed and judged again.
 * Then `ensureSession` is raced by 8 processes released together by a file barrier (three
 * rounds): each returns without error, one session exists and holds every racer's
 * message. Every leg.
 *
 * @param options Target, leg, racers.
 * @returns The test definitions to register with `Deno.test`.
 * @example
 * ```ts
 * import { endsAndReopensCell } from "./cell.ts";
 * const target = new URL("../reference_target.ts", import.meta.url);
 * for (const test of await endsAndReopensCell({ target })) Deno.test(test);
 * ```
 */
export function endsAndReopensCell(options: EndsAndReopensOptions): Promise<Deno.TestDefinition[]> {
  return defineCell({
    id: 10,
    // The kill series inside an end and a reopen loads the recorder (LD_PRELOAD).
    preloads: true,
    run: (ctx, t) => endsRun({ ctx, t, options, counted: new Map() }),
  }, options);
}

/** What cell 10's phases share. */
interface EndsRun {
  ctx: CellRun;
  t: Deno.TestContext;
  options: EndsAndReopensOptions;
  /** Journal lines already counted as acknowledged, by journal. */
  counted: Map<string, number>;
}

/** A cycled file and its journal. */
interface Files {
  db: string;
  journal: string;
}

/** Cell 10's phases: the lives of one file, the kill series, the ensure races. */
async function endsRun(cell: EndsRun): Promise<void> {
  const { ctx, t, options } = cell;
  startTallies(ctx);
  const main = { db: ctx.run.store("store"), journal: ctx.run.file("journal.jsonl") };
  // Killed right after the second end, the reopen a life starts with, the append after it.
  for (const kill of ["end@2", "start@1", "append@1"]) {
    await selfKilledLife(cell, main, { kill, mark: "-" });
    await judgeFile(cell, main, `killed after ${kill}`);
  }
  await randomLife(cell, main);
  await judgeFile(cell, main, "random kill");
  await resumeFile(cell, main, "random kill");
  await endSeries(cell);
  const racers = options.racers ?? 8;
  const db = ctx.run.store("races");
  await races(ctx, t, { db, op: "ensure", racers, rounds: options.raceRounds ?? 3 });
  for (const op of ["end", "reopen"] as const) await races(ctx, t, { db, op, racers, rounds: 1 });
  // The forced worst case, with the race series on (as cell 2's claim): every racer read first.
  if (raceSeriesOf(options.raceSeries) === "locks") {
    for (const op of ["ensure", "end", "reopen"] as const) await racerSeries(ctx, t, op);
  }
}

/** A cycler life on `files` that kills itself right after the call `life.kill` names. */
async function selfKilledLife(
  cell: EndsRun,
  files: Files,
  life: { kill: string; mark: string },
): Promise<void> {
  const child = cell.ctx.spawn(CYCLER, [files.db, files.journal, life.mark, life.kill]);
  try {
    await waitFor(() => child.exited !== undefined, {
      what: `the cycler to kill itself right after ${life.kill}`,
      deadlineMs: 60_000,
    });
  } finally {
    await reapAll([child]);
  }
  ok(classifyExit(child.exited!).kind === "killed", child.describe());
  tally(cell.ctx, "sigkills", 1);
  cell.ctx.observeLeg(files.db, `killed after ${life.kill}`, true);
}

/** A cycler life killed at a random moment, once it journaled 20 to 80 more lines. */
async function randomLife(cell: EndsRun, files: Files): Promise<void> {
  const { ctx } = cell;
  const before = countAcks(files.journal);
  const lines = 20 + Math.floor(ctx.random() * 60);
  const child = ctx.spawn(CYCLER, [files.db, files.journal, "-"]);
  try {
    await waitFor(() => countAcks(files.journal) >= before + lines, {
      what: `${lines} journaled calls of the cycler`,
      deadlineMs: 60_000,
      children: [child],
    });
    await killLanding(child, "the cycler at a random moment");
  } finally {
    await reapAll([child]);
  }
  tally(ctx, "sigkills", 1);
  ctx.observeLeg(files.db, "random kill");
}

/**
 * Judges the file in steps named with `label`: two passes, then an append from a fresh
 * process (journaled when taken, so later states must keep it).
 */
async function judgeFile(cell: EndsRun, files: Files, label: string): Promise<void> {
  const { ctx, t } = cell;
  const journal = readAckJournal<CycleEntry>(files.journal);
  const first = await readPass(ctx.target, files.db);
  const second = await readPass(ctx.target, files.db);
  const content = `probe:${label}`;
  // The bystanders were made before any kill: one not found lost its end.
  const { probe, bystanders } = await probeAppends(ctx.target, files.db, {
    content,
    notFound: null,
  });
  if (!probe.threw) {
    const writer = new AckWriter(files.journal);
    writer.write({ op: "append", content, answer: probe } satisfies CycleEntry);
    writer.close();
  }
  const state: CycledState = {
    rows: first.rows,
    session: first.session,
    probe,
    soundness: soundness(files.db, [first, second], first.invariants),
    bystanders,
  };
  const judged = judgeCycled(journal, state);
  const answered = journal.filter((e) => e.op !== "inv").length;
  tally(ctx, "acknowledgedOps", answered - (cell.counted.get(files.journal) ?? 0));
  cell.counted.set(files.journal, answered);
  tally(ctx, "lost", judged.lost);
  await checkSteps(t, judged.checks, `${label}: `);
}

/** Resume after recovery: a fresh cycler continues the state, dies right after its first end. */
async function resumeFile(cell: EndsRun, files: Files, label: string): Promise<void> {
  await selfKilledLife(cell, files, { kill: "end@1", mark: "-" });
  await judgeFile(cell, files, `${label}, resumed`);
}

/**
 * Inside an end and inside a reopen (the second of each): a kill at each of its calls,
 * each state judged and resumed.
 */
async function endSeries(cell: EndsRun): Promise<void> {
  const { ctx, t, options } = cell;
  const kind = seriesKind(options.killSeries);
  if (kind === "off") return;
  for (const mark of ["end", "reopen"]) {
    const files = (db: string, dir: string) => ({ db, journal: `${dir}/journal.jsonl` });
    await killSeries(ctx, t, {
      op: `${mark}Session`,
      occurrence: 2,
      script: CYCLER,
      args: (db, dir) => [db, `${dir}/journal.jsonl`, mark, "end@3"],
      check: (db, dir, label) => judgeFile(cell, files(db, dir), label),
      resume: (db, dir, label) => resumeFile(cell, files(db, dir), label),
      kind,
    });
  }
}
