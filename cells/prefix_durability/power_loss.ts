import { readAckJournal } from "../../harness/ack_journal.ts";
import {
  parseAcks,
  type PowerLossOptions,
  type PowerLossRun,
  type PowerLossRunOptions,
} from "../power_loss/record.ts";
import { writerRun } from "../power_loss/writer_run.ts";
import { powerLossKillCell } from "../power_loss/steps.ts";
import { acknowledgedOf, type Append, judgePrefix, type PrefixJudgement } from "./judge.ts";
import { type PowerLossResume, problemsOf } from "../power_loss/resume.ts";
import { PREFIX_WRITER } from "./_children.ts";

/** Appends the second life acknowledges on a recovered state before it is SIGKILLed. */
const SECOND_LIFE = 3;

/**
 * Cell 1's second life: the prefix writer resumes after what the store recovered, appends
 * until SIGKILLed, and the transcript must hold both lives' acknowledged appends, a
 * contiguous prefix with their row ids.
 */
function resumeAppends(run: PowerLossRunOptions): PowerLossResume<PrefixJudgement> {
  return {
    landed: (judged, acks) => judged.rows.length > acknowledgedOf(parseAcks<Append>(acks)).length,
    life: ({ db, acks }) => ({ script: PREFIX_WRITER, args: [db, acks], k: SECOND_LIFE }),
    async judge({ db, acks: more }, acks) {
      const both = [...parseAcks<Append>(acks), ...readAckJournal<Append>(more)];
      return problemsOf((await judgePrefix(run.target, db, both)).checks);
    },
  };
}

/**
 * One recorded run of cell 1's writer: it appends `m0, m1, …` under the recorder
 * and is SIGKILLed (at the acknowledgement instant of a random append past
 * `minAcknowledged`, or at a random moment past it); then every crash state is checked
 * by the judge of the SIGKILL cell 1 (a contiguous prefix, acknowledged row ids kept,
 * deterministic recovery, integrity, invariants), and the acknowledged appends missing
 * from each are counted.
 *
 * @param options Leg, target, folder, kill, thresholds, states.
 * @returns The counts: acknowledged, the most lost from a power-loss state, corrupt states.
 * @example
 * ```ts ignore
 * import { currentLeg } from "../../harness/legs.ts";
 * import { powerLossPrefixRun } from "./power_loss.ts";
 * const run = await powerLossPrefixRun({
 *   leg: currentLeg(),
 *   target: new URL("../reference_target.ts", import.meta.url).href,
 *   dir: Deno.makeTempDirSync(),
 *   kill: "ack",
 * });
 * console.log(run.losingStates, run.corruptStates, run.statesChecked, run.resumes.run);
 * ```
 */
export function powerLossPrefixRun(options: PowerLossRunOptions): Promise<PowerLossRun> {
  return writerRun(options, {
    operations: 40,
    writer: ({ files, operations, random, run }) => {
      const selfKill = run.kill === "ack"
        ? [String(operations + Math.floor(random() * operations))]
        : [];
      return { script: PREFIX_WRITER, args: [files.db, files.acks, ...selfKill], what: "appends" };
    },
    judging: (run) => ({
      judge: (db, lines) => judgePrefix(run.target, db, parseAcks<Append>(lines)),
      resume: resumeAppends(run),
    }),
  });
}

/**
 * Cell 1 in the power-loss tier: the prefix writer runs under the recorder and
 * is SIGKILLed at the acknowledgement instant and at a random moment. Every
 * append acknowledged before a state's instant must be in it (durability); every crash state
 * must recover to the contiguous prefix `m0..m(N-1)` with acknowledged row ids,
 * deterministic recovery, `integrity_check` ok and the invariants (consistency). After
 * the acknowledgement-instant kill, replaying the log must give the files on disk
 * exactly (the recorder missed nothing).
 *
 * @param options Target, leg, thresholds, states.
 * @returns The test definitions.
 * @example
 * ```ts ignore
 * import { powerLossPrefixCell } from "./power_loss.ts";
 * const target = new URL("../reference_target.ts", import.meta.url);
 * for (const test of await powerLossPrefixCell({ target })) Deno.test(test);
 * ```
 */
export function powerLossPrefixCell(options: PowerLossOptions): Promise<Deno.TestDefinition[]> {
  return powerLossKillCell({
    id: 1,
    what: "appends",
    run: powerLossPrefixRun,
  }, options);
}
