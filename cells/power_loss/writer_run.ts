// The shape of a power-loss run of a cell's own writer: the writer child runs under the
// recorder, is SIGKILLed after the k-th acknowledgement (its own kill, or the parent's once
// enough journal lines are in), and every crash state is judged by the cell's judge.
import { runSeed, seededRandom } from "../../harness/seeded_random.ts";
import type { StateJudgement } from "../engine/state_check.ts";
import {
  checkStates,
  parseAcks,
  type PowerLossRun,
  type PowerLossRunOptions,
  recordAndKill,
  type RecordedWriter,
  type RunFiles,
  runFiles,
  type StateJudging,
} from "./record.ts";

/** A run's options once its seed and the random kill's threshold (in journal lines) are fixed. */
export type WriterRunOptions = PowerLossRunOptions & { seed: number; minAcknowledged: number };

/** What the writer of a run is given: its files, the run, the operations, the seeded random. */
export interface WriterPlan {
  /** The run's files (database folder, acknowledgement journal, log). */
  files: RunFiles;
  /** The run, its seed drawn and its threshold in journal lines. */
  run: WriterRunOptions;
  /** Acknowledged operations before the kill (`minAcknowledged` of the options, or the default). */
  operations: number;
  /** The run's seeded random numbers (the `ack` kill's draw). */
  random: () => number;
}

/**
 * What sets one cell's recorded writer run apart.
 *
 * @example
 * ```ts ignore
 * import type { WriterRunSpec } from "./writer_run.ts";
 * const spec: WriterRunSpec = {
 *   operations: 10,
 *   writer: ({ files }) => ({ script, args: [files.db, files.acks], what: "appends" }),
 *   judging: (run) => ({ judge: (db, lines) => judgeAppends(run.target, db, lines) }),
 * };
 * ```
 */
export interface WriterRunSpec<J extends StateJudgement = StateJudgement> {
  /** Acknowledged operations before the kill when the options name none. */
  operations: number;
  /** Journal lines one operation writes (default 1): the parent's kill waits for the lines. */
  linesPerOperation?: number;
  /** The writer child, its arguments (its own kill among them), what it does, its environment. */
  writer: (plan: WriterPlan) => RecordedWriter;
  /** How the run's states are judged (the cell's judge, its second life, its count). */
  judging: (run: WriterRunOptions) => StateJudging<J>;
  /** Sets the database up before the recording (part of the baseline every state starts from). */
  prepare?: (db: string, run: WriterRunOptions) => Promise<void>;
}

/**
 * One recorded run of a cell's writer: under the file-system call recorder, SIGKILLed
 * right after an acknowledgement (`ack`: the writer's own kill) or at a random moment past
 * `minAcknowledged` operations; then every crash state a power loss may leave is judged by
 * the cell's judge against the journal lines before its instant, and a few recovered states
 * are continued when the cell has a second life.
 *
 * @param options Leg, target, folder, kill, thresholds (in operations), states.
 * @param spec The cell's writer, judge, default operations and journal lines an operation.
 * @returns What the run found.
 * @example
 * ```ts ignore
 * import { writerRun } from "./writer_run.ts";
 * const run = await writerRun(options, spec);
 * console.log(run.losingStates, run.corruptStates, run.statesChecked);
 * ```
 */
export async function writerRun<J extends StateJudgement>(
  options: PowerLossRunOptions,
  spec: WriterRunSpec<J>,
): Promise<PowerLossRun> {
  const seed = options.seed ?? runSeed();
  const random = seededRandom(seed);
  const operations = options.minAcknowledged ?? spec.operations;
  // The parent's kill counts journal lines: an operation may write more than one.
  const minAcknowledged = operations * (spec.linesPerOperation ?? 1);
  const run: WriterRunOptions = { ...options, seed, minAcknowledged };
  let files = runFiles(run.dir);
  if (spec.prepare) {
    await spec.prepare(files.db, run);
    // The prepared files are the baseline.
    files = runFiles(run.dir);
  }
  await recordAndKill(run, files, spec.writer({ files, run, operations, random }));
  return checkStates(run, files, spec.judging(run));
}

/**
 * The acknowledgements among the lines of a journal that also notes each invocation: the
 * entries marked `k: "ack"` (a writer's `acknowledged` count in `StateJudging`).
 *
 * @param lines The journal lines.
 * @returns How many acknowledge an operation.
 * @example
 * ```ts
 * import { countAckEntries } from "./writer_run.ts";
 * console.log(countAckEntries(['{"k":"inv"}', '{"k":"ack"}', '{"k":"inv"}'])); // 1
 * ```
 */
export function countAckEntries(lines: readonly string[]): number {
  return parseAcks<{ k?: string }>(lines).filter((entry) => entry.k === "ack").length;
}

/**
 * The environment of a writer whose `ack` kill is one of the store's crash points: it dies
 * the `nth()`-th time it gets to `point` (drawn for that kill only); none for the others.
 *
 * @param run The run (its kill).
 * @param point The crash point, e.g. `publishCompressionChild:afterCommit`.
 * @param nth Which time it dies there.
 * @returns The writer's extra environment.
 * @example
 * ```ts ignore
 * import { ackCrashEnv } from "./writer_run.ts";
 * const env = ackCrashEnv(run, "appendMessage:afterCommit", () => 10);
 * ```
 */
export function ackCrashEnv(
  run: WriterRunOptions,
  point: string,
  nth: () => number,
): Record<string, string> {
  return run.kill === "ack" ? { SESSION_DB_CRASH_AT: `${point}@${nth()}` } : {};
}
