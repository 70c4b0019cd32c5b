import { join } from "node:path";
import { readAckJournal } from "../../harness/ack_journal.ts";
import { type EditJudgement, type EditStep, judgeEdits } from "./judge.ts";
import { type PowerLossResume, problemsOf } from "../power_loss/resume.ts";

/** Edit steps the second life acknowledges on a recovered store before it is SIGKILLed. */
const SECOND_LIFE = 3;

/** Whether the step in flight at the crash is in the recovered state (unacknowledged). */
function inflightLanded(judged: EditJudgement): boolean {
  const step = judged.inflight;
  if (!step) return false;
  if (step.op === "fork") return judged.state.branches[step.branch!]?.exists === true;
  const active = judged.state.rows.filter((r) => r.active).map((r) => r.content);
  return JSON.stringify(active) === JSON.stringify(step.expect.map(([, content]) => content));
}

/**
 * Cell 4's second life: the editor continues on the recovered store (its steps numbered
 * after the first life's, so branches and contents stay apart) until SIGKILLed, and the
 * store must be exactly what the first life's recovered steps and the second life's
 * leave, never a mix, no row duplicated, rewound rows inactive.
 */
function resumeEdits(
  run: PowerLossRunOptions & { seed: number },
  journaled: readonly EditStep[],
): PowerLossResume<EditJudgement> {
  return {
    landed: (judged) => inflightLanded(judged),
    life: ({ dir, db, acks }) => {
      const first = Math.max(-1, ...journaled.map((step) => step.s)) + 1;
      const intents = join(dir, "intents.jsonl");
      const args = [db, acks, intents, String(run.seed + 1), "-", String(first)];
      return { script: EDITOR, args, k: SECOND_LIFE };
    },
    async judge({ dir, db, acks: more }, acks, judged) {
      const recovered = [
        ...parseAcks<EditStep>(acks),
        ...(inflightLanded(judged) ? [judged.inflight!] : []),
      ];
      const judgedAgain = await judgeEdits(run.target, db, {
        acks: [...recovered, ...readAckJournal<EditStep>(more)],
        intents: [...recovered, ...readAckJournal<EditStep>(join(dir, "intents.jsonl"))],
      });
      return problemsOf(judgedAgain.checks);
    },
  };
}
import {
  parseAcks,
  type PowerLossOptions,
  type PowerLossRun,
  type PowerLossRunOptions,
} from "../power_loss/record.ts";
import { ackCrashEnv, writerRun } from "../power_loss/writer_run.ts";
import { powerLossKillCell } from "../power_loss/steps.ts";
import { EDITOR } from "./_children.ts";

const REWIND_COMMIT = "rewindToMessage:afterCommit";
const FORK_COMMIT = "forkSession:afterCommit";

/**
 * One recorded run of cell 4's editor: edit/rewind/fork cycles on `main` under the
 * file-system call recorder, SIGKILLed at a random moment past `minAcknowledged` steps, or (`ack`)
 * right after the COMMIT of a rewind or a fork by its `afterCommit` crash point; then
 * every crash state is checked by the judge of the SIGKILL cell 4: exactly the state of
 * some prefix of the steps (the active transcript, the rewound rows inactive, the
 * branches whole or absent), no row duplicated, and with durability every acknowledged
 * step in it.
 *
 * @param options Leg, target, folder, kill, thresholds, states.
 * @returns The counts.
 * @example
 * ```ts
 * import { currentLeg } from "../../harness/legs.ts";
 * import { powerLossForkRun } from "./power_loss.ts";
 * const run = await powerLossForkRun({
 *   leg: currentLeg(),
 *   target: new URL("../reference_target.ts", import.meta.url).href,
 *   dir: Deno.makeTempDirSync(),
 *   kill: "random",
 * });
 * console.log(run.losingStates, run.corruptStates, run.statesChecked, run.resumes.run);
 * ```
 */
export function powerLossForkRun(options: PowerLossRunOptions): Promise<PowerLossRun> {
  // The editor's steps and the kill point follow the run's seed.
  const intents = join(options.dir, "intents.jsonl");
  return writerRun(options, {
    operations: 30,
    writer: ({ files, run }) => {
      // A fork every 7 steps, a rewind about as often: die after the k-th commit of one.
      const point = run.seed % 2 ? REWIND_COMMIT : FORK_COMMIT;
      const k = Math.max(2, Math.round(run.minAcknowledged / 7)) + (run.seed >> 1) % 3;
      const args = [files.db, files.acks, intents, String(run.seed)];
      return { script: EDITOR, args, what: "edit steps", env: ackCrashEnv(run, point, () => k) };
    },
    judging: (run) => {
      const journaled = readAckJournal<EditStep>(intents);
      return {
        judge: (db, lines) => {
          // Steps run one at a time: before a state's instant at most the step after its
          // last acknowledgement was in flight.
          const acks = parseAcks<EditStep>(lines);
          return judgeEdits(run.target, db, { acks, intents: journaled.slice(0, acks.length + 1) });
        },
        resume: resumeEdits(run, journaled),
      };
    },
  });
}

/**
 * Cell 4 in the power-loss tier: the editor (edit/rewind/fork cycles) runs under the
 * file-system call recorder and is SIGKILLed at a random moment and right after a rewind's or a
 * fork's COMMIT. Every acknowledged step must be in every power-loss state after it; every crash
 * state must be exactly what some prefix of the steps leaves (the active transcript,
 * the rewound rows inactive and no other, each branch whole or absent, never a mix), no
 * row duplicated, recovery deterministic, integrity and invariants.
 *
 * @param options Target, leg, thresholds, states.
 * @returns The test definitions.
 * @example
 * ```ts ignore
 * import { powerLossForkCell } from "./power_loss.ts";
 * const target = new URL("../reference_target.ts", import.meta.url);
 * for (const test of await powerLossForkCell({ target })) Deno.test(test);
 * ```
 */
export function powerLossForkCell(options: PowerLossOptions): Promise<Deno.TestDefinition[]> {
  return powerLossKillCell({
    id: 4,
    what: "edit steps",
    kills: ["random", "ack"],
    ackPoints: [REWIND_COMMIT, FORK_COMMIT],
    run: powerLossForkRun,
  }, options);
}
