import { deepStrictEqual, ok } from "node:assert/strict";
import { readAckJournal } from "../../harness/ack_journal.ts";
import { type Child, classifyExit, reapAll } from "../../harness/child.ts";
import { waitFor } from "../../harness/wait_for.ts";
import { type CellRun, defineCell } from "../engine/cell.ts";
import type { CellOptions } from "../engine/options.ts";
import { checkSteps } from "../engine/state_check.ts";
import { startTallies, tally } from "../engine/tally.ts";
import { crashAtPoint, killLanding } from "../moves/kill.ts";
import { killSeries, seriesKind } from "../moves/kill_series.ts";
import { stopSeries } from "../moves/guarded_stops.ts";
import { raceSeriesOf } from "../moves/race.ts";
import { RESUMED_OPS, resumedStep } from "../moves/resume.ts";
import { answerOf, describeAnswer } from "../contract/typed.ts";
import { loadTarget, openTargetStore } from "../contract/target.ts";
import type { BatchEntry } from "./batches.ts";
import { recoverAndJudge } from "./judge.ts";
import { BATCH_WRITER } from "./_children.ts";
import { longSession } from "./long_session.ts";

/**
 * Options of {@linkcode batchAtomicityCell}.
 *
 * @example
 * ```ts
 * import { batchAtomicityCell, type BatchAtomicityOptions } from "./cell.ts";
 * const options: BatchAtomicityOptions = {
 *   target: new URL("../reference_target.ts", import.meta.url),
 *   minAcknowledged: 40,
 * };
 * for (const test of await batchAtomicityCell(options)) Deno.test(test);
 * ```
 */
export interface BatchAtomicityOptions extends CellOptions {
  /** Acknowledged batches (per writer) before a random kill, at least (default 20). */
  minAcknowledged?: number;
  /** Kill at the target's `appendMessages:*` crash points (default `true`). */
  crashPoints?: boolean;
}

/**
 * Cell 9, batch atomicity: `appendMessages` is all or nothing. A writer child appends
 * batches of 1 to 20 messages to three sessions, journaling each batch when invoked and
 * once acknowledged with its ids, and is SIGKILLed at random, right after an
 * acknowledgement, at the target's `appendMessages:*` crash points, or (where it declares
 * none) at each file-system call inside a batch; two writers on one file are killed
 * together. Each recovered file, read twice from fresh processes: every acknowledged batch
 * wholly present with its ids; every batch all or nothing; a batch's ids increasing, with
 * no other message's id among them, and after every id acknowledged before it was
 * invoked; nothing duplicated or reordered; `messageCount` (when present) equal to the
 * rows; recovery deterministic, integrity, invariants; and a fresh writer continues it
 * and is killed and judged again. A session of 12,000 messages (longer than the pages
 * stores answer by default), killed after its last batch, reads back whole. An empty batch
 * returns `[]` and changes nothing. Every leg.
 *
 * @param options Target, leg, thresholds.
 * @returns The test definitions to register with `Deno.test`.
 * @example
 * ```ts
 * import { batchAtomicityCell } from "./cell.ts";
 * const target = new URL("../reference_target.ts", import.meta.url);
 * for (const test of await batchAtomicityCell({ target })) Deno.test(test);
 * ```
 */
export function batchAtomicityCell(options: BatchAtomicityOptions): Promise<Deno.TestDefinition[]> {
  return defineCell({
    id: 9,
    // The kill series inside a batch loads the recorder (LD_PRELOAD).
    preloads: true,
    run: (ctx, t) => batchRun({ ctx, t, options }),
  }, options);
}

/** What cell 9's phases share. */
interface BatchRun {
  ctx: CellRun;
  t: Deno.TestContext;
  options: BatchAtomicityOptions;
}

/** A file and its writers' journals, by writer. */
interface Files {
  db: string;
  journals: Record<string, string>;
}

/**
 * Cell 9's phases: the kill rounds, the pair, the alternating pair, the crash points, the
 * kill series, the long session, the empty batch.
 */
async function batchRun(cell: BatchRun): Promise<void> {
  const { ctx } = cell;
  startTallies(ctx);
  const main = { db: ctx.run.store("store"), journals: { w0: ctx.run.file("journal-w0.jsonl") } };
  await killRounds(cell, main);
  await pairRound(cell);
  await alternatingRound(cell);
  const points = ((await loadTarget(ctx.target)).crashPoints?.() ?? [])
    .filter((p) => p.startsWith("appendMessages:"));
  if (cell.options.crashPoints !== false) await crashPointKills(cell, points);
  await batchSeries(cell, points);
  await longSession(ctx, cell.t);
  const ends = await emptyBatch(cell, main.db);
  // With the race series on: a batch stopped at each lock call while its session is ended.
  if (ends && raceSeriesOf(cell.options.raceSeries) === "locks") {
    await stopSeries(ctx, cell.t, ["batchEnded"]);
  }
}

/** The acknowledged batches of a journal. */
function acksIn(path: string): number {
  return readAckJournal<BatchEntry>(path).filter((entry) => entry.k === "ack").length;
}

/** Judges a file in steps named with `label`; counts what it lost. */
async function judgeFile(cell: BatchRun, files: Files, label: string): Promise<void> {
  const judged = await recoverAndJudge(cell.ctx.target, files.db, files.journals);
  tally(cell.ctx, "lost", judged.lost);
  await checkSteps(cell.t, judged.checks, `${label}: `);
}

/**
 * Three lives of one writer on one file: killed at a random moment past the threshold,
 * then right after a random acknowledgement (where a store acknowledging before COMMIT
 * loses it), then a fresh writer's three batches; each state judged.
 */
async function killRounds(cell: BatchRun, main: Files): Promise<void> {
  const { ctx } = cell;
  const min = cell.options.minAcknowledged ?? 20;
  const journal = main.journals.w0!;
  await randomKill(cell, { ...main, writers: ["w0"], min, label: "round 1" });
  await judgeFile(cell, main, "round 1");
  const selfKill = 1 + Math.floor(ctx.random() * min);
  const child = ctx.spawn(BATCH_WRITER, [main.db, journal, "w0", String(selfKill)]);
  await selfKilled(cell, child, { db: main.db, label: "round 2", journal });
  await judgeFile(cell, main, "round 2");
  await resumeFile(cell, main, "round 3");
}

/**
 * Writers on one file, SIGKILLed (each asserted alive) once every one has acknowledged at
 * least `min` more batches (a random share more).
 */
async function randomKill(
  cell: BatchRun,
  kill: Files & { writers: string[]; min: number; label: string },
): Promise<void> {
  const { ctx } = cell;
  const { db, journals, writers, label } = kill;
  const min = kill.min + Math.floor(ctx.random() * kill.min);
  const before = writers.map((w) => acksIn(journals[w]!));
  const children = writers.map((w) => ctx.spawn(BATCH_WRITER, [db, journals[w]!, w]));
  const counts = () => writers.map((w, i) => acksIn(journals[w]!) - before[i]!);
  try {
    await waitFor(() => counts().every((n) => n >= min), {
      what: `${min} acknowledged batches per writer (${label})`,
      deadlineMs: 60_000,
      children,
      observed: () => `acknowledged ${JSON.stringify(counts())}`,
      progress: ctx.progress(() => Math.min(...counts())),
    });
    for (const child of children) await killLanding(child, `a batch writer (${label})`);
  } finally {
    await reapAll(children);
  }
  tally(ctx, "sigkills", children.length);
  tally(ctx, "acknowledgedOps", counts().reduce((a, b) => a + b, 0));
  ctx.observeLeg(db, label);
}

/** Waits for a writer that kills itself right after an acknowledgement; asserts it did. */
async function selfKilled(
  cell: BatchRun,
  child: Child,
  life: { db: string; label: string; journal: string },
): Promise<void> {
  const before = acksIn(life.journal);
  try {
    await waitFor(() => child.exited !== undefined, {
      what: `the writer to kill itself after an acknowledged batch (${life.label})`,
      deadlineMs: 60_000,
    });
  } finally {
    await reapAll([child]);
  }
  ok(classifyExit(child.exited!).kind === "killed", child.describe());
  tally(cell.ctx, "sigkills", 1);
  tally(cell.ctx, "acknowledgedOps", acksIn(life.journal) - before);
  cell.ctx.observeLeg(life.db, life.label, true);
}

/**
 * Resume after recovery: a fresh writer (the first of the file's) continues the recovered
 * state, kills itself right after its third acknowledged batch, and the file is judged
 * with both lives' batches.
 */
async function resumeFile(cell: BatchRun, files: Files, label: string): Promise<void> {
  const [writer, journal] = Object.entries(files.journals)[0]!;
  const before = acksIn(journal);
  const args = [files.db, journal, writer, String(RESUMED_OPS)];
  const resume = { ops: "batches", script: BATCH_WRITER, args, db: files.db, label };
  if (!await resumedStep(cell.ctx, cell.t, resume)) return;
  tally(cell.ctx, "acknowledgedOps", acksIn(journal) - before);
  await judgeFile(cell, files, `${label}, resumed`);
}

/**
 * Two writers on one file at once, killed together: a batch's ids must hold no id of the
 * other writer's messages. Judged, then resumed.
 */
async function pairRound(cell: BatchRun): Promise<void> {
  const { ctx } = cell;
  const journals = { wa: ctx.run.file("journal-wa.jsonl"), wb: ctx.run.file("journal-wb.jsonl") };
  const pair = { db: ctx.run.store("pair"), journals };
  const min = cell.options.minAcknowledged ?? 20;
  await randomKill(cell, { ...pair, writers: ["wa", "wb"], min, label: "two writers" });
  await judgeFile(cell, pair, "two writers");
  await resumeFile(cell, pair, "two writers");
}

/** Where a writer dies at a point: inside its third batch (per-message points, its third message). */
function occurrenceAt(point: string): number {
  // Batches 0 and 1 hold 6 and 13 messages: a point passed once per message is at its
  // 22nd pass in the third message of batch 2.
  return /insert/i.test(point) ? 22 : 3;
}

/** A fresh writer at each `appendMessages:*` point the target lists, dying there; judged, resumed. */
async function crashPointKills(cell: BatchRun, points: readonly string[]): Promise<void> {
  const { ctx, t } = cell;
  ctx.note("crashPoints", points);
  for (const point of points) {
    const { db, acksPath } = await crashAtPoint({ ctx, t }, {
      point,
      nth: occurrenceAt(point),
      script: BATCH_WRITER,
      args: ({ db, acksPath }) => [db, acksPath, "w0"],
      journal: "journal-w0.jsonl",
      who: "writer",
    });
    const files = { db, journals: { w0: acksPath } };
    tally(ctx, "acknowledgedOps", acksIn(files.journals.w0));
    await judgeFile(cell, files, point);
    await resumeFile(cell, files, point);
  }
}

/**
 * Inside a batch with no declared crash point: a kill at each of its calls (the writer's
 * third batch, 20 messages, two acknowledged before it), each state judged and resumed.
 */
async function batchSeries(cell: BatchRun, points: readonly string[]): Promise<void> {
  const { ctx, t, options } = cell;
  const kind = seriesKind(options.killSeries);
  if (kind === "off" || points.length > 0) return;
  const files = (dir: string, db: string) => ({ db, journals: { w0: `${dir}/journal-w0.jsonl` } });
  await killSeries(ctx, t, {
    op: "appendMessages",
    occurrence: 3,
    script: BATCH_WRITER,
    args: (db, dir) => [db, `${dir}/journal-w0.jsonl`, "w0"],
    check: (db, dir, label) => judgeFile(cell, files(dir, db), label),
    resume: (db, dir, label) => resumeFile(cell, files(dir, db), label),
    kind,
  });
}

/**
 * An empty batch returns `[]` and changes nothing (the contract's choice). Returns whether
 * the store has `endSession` (for the stop series).
 */
async function emptyBatch(cell: BatchRun, db: string): Promise<boolean> {
  const store = await openTargetStore(cell.ctx.target, db);
  try {
    const session = "w0-s0";
    const read = async () => ({
      rows: await store.getMessages(session),
      count: await store.messageCount?.(session),
    });
    const before = await read();
    const answer = await answerOf(() => store.appendMessages!(session, []));
    const after = await read();
    await cell.t.step("an empty batch returns [] and changes nothing", () => {
      const empty = !answer.threw && Array.isArray(answer.value) && answer.value.length === 0;
      ok(empty, `appendMessages("${session}", []) ${describeAnswer(answer)}`);
      deepStrictEqual(after, before, "the session changed");
    });
    return typeof store.endSession === "function";
  } finally {
    await store.close();
  }
}

/** Batches each of the alternating writers makes. */
const ALTERNATING_BATCHES = 4;

/**
 * Two writers on one file taking turns, one batch each, handed out by the test process
 * (a file per turn): a store whose processes hold ids back for later batches (a block
 * reserved ahead, a counter of their own) puts the other writer's messages inside a
 * batch here on every run, not only when a race happens to interleave them. Killed
 * between turns, judged.
 */
async function alternatingRound(cell: BatchRun): Promise<void> {
  const { ctx } = cell;
  const writers = ["xa", "xb"];
  const journals = Object.fromEntries(writers.map((w) => [w, ctx.run.file(`journal-${w}.jsonl`)]));
  const files = { db: ctx.run.store("alternating"), journals };
  const turns = ctx.run.file("turns");
  await Deno.mkdir(turns);
  const children = writers.map((w) =>
    ctx.spawn(BATCH_WRITER, [files.db, journals[w]!, w, "Infinity", turns])
  );
  try {
    for (let b = 0; b < ALTERNATING_BATCHES; b++) {
      for (const w of writers) {
        await Deno.writeTextFile(`${turns}/${w}-${b}`, "");
        await waitFor(() => acksIn(journals[w]!) > b, {
          what: `batch ${b} of ${w} (alternating writers)`,
          deadlineMs: 60_000,
          children,
        });
      }
    }
    for (const child of children) await killLanding(child, "an alternating batch writer");
  } finally {
    await reapAll(children);
  }
  tally(ctx, "sigkills", children.length);
  tally(ctx, "acknowledgedOps", 2 * ALTERNATING_BATCHES);
  ctx.observeLeg(files.db, "alternating writers", true);
  await judgeFile(cell, files, "alternating writers");
}
