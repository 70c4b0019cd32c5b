import { join } from "node:path";
import { readAckJournal } from "../../harness/ack_journal.ts";
import type { StateJudgement } from "../engine/state_check.ts";
import { openTargetStore } from "../contract/target.ts";
import {
  parseAcks,
  type PowerLossOptions,
  type PowerLossRun,
  type PowerLossRunOptions,
} from "../power_loss/record.ts";
import { countAckEntries, writerRun } from "../power_loss/writer_run.ts";
import { powerLossKillCell } from "../power_loss/steps.ts";
import { type PowerLossResume, problemsOf } from "../power_loss/resume.ts";
import { type BatchEntry, memberOf, writerSessions } from "./batches.ts";
import { recoverAndJudge } from "./judge.ts";
import { BATCH_WRITER } from "./_children.ts";

/** The one writer of a run. */
const WRITER = "w0";

/** Batches the second life acknowledges on a recovered state before it kills itself. */
const SECOND_LIFE = 3;

/** A batch judgement, with the batches the recovered store holds (the writer's next batch). */
interface BatchPowerLossJudgement extends StateJudgement {
  recovered: number;
}

/** The writer's batches the store holds: one past the last batch any row names. */
async function recoveredBatches(target: string, db: string): Promise<number> {
  const store = await openTargetStore(target, db);
  try {
    let last = -1;
    for (const session of writerSessions(WRITER)) {
      const rows = await Promise.resolve().then(() => store.getMessages(session)).catch(() => []);
      for (const row of rows) last = Math.max(last, memberOf(row.content)?.b ?? -1);
    }
    return last + 1;
  } finally {
    await store.close();
  }
}

/** Writes journal entries where cell 9's judge reads a writer's journal from. */
function writeJournal(path: string, entries: readonly BatchEntry[]): void {
  Deno.writeTextFileSync(path, entries.map((e) => `${JSON.stringify(e)}\n`).join(""));
}

/**
 * Judges one state with cell 9's judge: the journal lines before its instant (each batch's
 * invocation and acknowledgement) are the writer's journal.
 */
async function judgeState(
  run: PowerLossRunOptions,
  db: string,
  entries: readonly BatchEntry[],
): Promise<BatchPowerLossJudgement> {
  const journal = join(run.dir, "judged-journal.jsonl");
  writeJournal(journal, entries);
  const judged = await recoverAndJudge(run.target, db, { [WRITER]: journal });
  return { ...judged, recovered: await recoveredBatches(run.target, db) };
}

/**
 * Cell 9's second life: the batch writer goes on after the last batch the store recovered,
 * kills itself after a few acknowledged batches, and the store must hold both lives'
 * acknowledged batches whole, every batch all or nothing, contiguous and after every
 * earlier acknowledged id.
 */
function resumeBatches(run: PowerLossRunOptions): PowerLossResume<BatchPowerLossJudgement> {
  return {
    landed: (judged, acks) => judged.recovered > countAckEntries(acks),
    // Two lines a batch: its invocation and its acknowledgement.
    life: ({ db, acks }) => ({
      script: BATCH_WRITER,
      args: [db, acks, WRITER, String(SECOND_LIFE)],
      k: 2 * SECOND_LIFE,
    }),
    async judge({ dir, db, acks: more }, acks) {
      const both = join(dir, "both-journal.jsonl");
      writeJournal(both, [...parseAcks<BatchEntry>(acks), ...readAckJournal<BatchEntry>(more)]);
      return problemsOf((await recoverAndJudge(run.target, db, { [WRITER]: both })).checks);
    },
  };
}

/**
 * One recorded run of cell 9's batch writer: it appends batches of 1 to 20 messages under
 * the file-system call recorder, journaling each batch when invoked and once acknowledged
 * (the journal is the recorder's mark file), and is SIGKILLed right after a random
 * acknowledgement past `minAcknowledged` batches (`ack`, by its own count, so for any
 * store) or at a random moment past it; then every crash state is judged by cell 9's
 * judge against the journal lines before its instant: every acknowledged batch wholly
 * present with its ids, every batch all or nothing, ids contiguous and after every earlier
 * acknowledged id, nothing duplicated or reordered, `messageCount`, integrity, invariants,
 * recovery deterministic.
 *
 * @param options Leg, target, folder, kill, thresholds (batches), states.
 * @returns The counts (`acknowledged` in batches).
 * @example
 * ```ts ignore
 * import { currentLeg } from "../../harness/legs.ts";
 * import { powerLossBatchRun } from "./power_loss.ts";
 * const run = await powerLossBatchRun({
 *   leg: currentLeg(),
 *   target: new URL("../reference_target.ts", import.meta.url).href,
 *   dir: Deno.makeTempDirSync(),
 *   kill: "ack",
 * });
 * console.log(run.losingStates, run.corruptStates, run.statesChecked, run.resumes.run);
 * ```
 */
export function powerLossBatchRun(options: PowerLossRunOptions): Promise<PowerLossRun> {
  return writerRun(options, {
    operations: 10,
    // Two journal lines a batch: its invocation and its acknowledgement.
    linesPerOperation: 2,
    writer: ({ files, run, operations: batches, random }) => ({
      script: BATCH_WRITER,
      args: [
        files.db,
        files.acks,
        WRITER,
        ...(run.kill === "ack" ? [String(batches + Math.floor(random() * batches))] : []),
      ],
      what: "journal lines (two a batch)",
    }),
    judging: (run) => ({
      judge: (db, lines) => judgeState(run, db, parseAcks<BatchEntry>(lines)),
      resume: resumeBatches(run),
      acknowledged: countAckEntries,
    }),
  });
}

/**
 * Cell 9 in the power-loss tier: the batch writer runs under the recorder and is
 * SIGKILLed right after an acknowledged batch and at a random moment. Every batch
 * acknowledged before a state's instant must be wholly in it under its ids (durability);
 * every crash state must hold every batch all or nothing, ids contiguous in the id order
 * and after every id acknowledged before the batch was invoked, nothing duplicated or
 * reordered, `messageCount` equal to the rows, integrity, invariants, recovery
 * deterministic; a fresh writer continues a few recovered states. A store without
 * `appendMessages` is SKIPPED with the name.
 *
 * @param options Target, leg, thresholds (batches), states.
 * @returns The test definitions.
 * @example
 * ```ts ignore
 * import { powerLossBatchCell } from "./power_loss.ts";
 * const target = new URL("../reference_target.ts", import.meta.url);
 * for (const test of await powerLossBatchCell({ target })) Deno.test(test);
 * ```
 */
export function powerLossBatchCell(options: PowerLossOptions): Promise<Deno.TestDefinition[]> {
  return powerLossKillCell({
    id: 9,
    what: "batches",
    run: powerLossBatchRun,
  }, options);
}
