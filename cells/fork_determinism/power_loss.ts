import { join } from "node:path";
import { readAckJournal } from "../../harness/ack_journal.ts";
import { runSeed } from "../../harness/seeded_random.ts";
import { type EditJudgement, type EditStep, judgeEdits } from "./judge.ts";
import { powerLossLife, type PowerLossResume, problemsOf } from "../power_loss/resume.ts";

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
    async continue(dir, acks, judged) {
      const db = join(dir, "db", "store.db");
      const more = join(dir, "acks.jsonl");
      const intents = join(dir, "intents.jsonl");
      const first = Math.max(-1, ...journaled.map((step) => step.s)) + 1;
      const args = [db, more, intents, String(run.seed + 1), "-", String(first)];
      const why = await powerLossLife(run, {
        dir,
        script: EDITOR,
        args,
        acks: more,
        k: SECOND_LIFE,
      });
      if (why) return [why];
      const recovered = [
        ...parseAcks<EditStep>(acks),
        ...(inflightLanded(judged) ? [judged.inflight!] : []),
      ];
      const judgedAgain = await judgeEdits(run.target, db, {
        acks: [...recovered, ...readAckJournal<EditStep>(more)],
        intents: [...recovered, ...readAckJournal<EditStep>(intents)],
      });
      return problemsOf(judgedAgain.checks);
    },
  };
}
import {
  checkStates,
  parseAcks,
  type PowerLossOptions,
  type PowerLossRun,
  type PowerLossRunOptions,
  recordAndKill,
  runFiles,
} from "../power_loss/record.ts";
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
export async function powerLossForkRun(options: PowerLossRunOptions): Promise<PowerLossRun> {
  // One seed, reported with the run: the editor's steps, the kill point and the states.
  const seed = options.seed ?? runSeed();
  const run = { ...options, seed, minAcknowledged: options.minAcknowledged ?? 30 };
  const files = runFiles(run.dir);
  const intents = join(run.dir, "intents.jsonl");
  // A fork every 7 steps, a rewind about as often: die after the k-th commit of one.
  const point = seed % 2 ? REWIND_COMMIT : FORK_COMMIT;
  const k = Math.max(2, Math.round(run.minAcknowledged / 7)) + (seed >> 1) % 3;
  const env: Record<string, string> = run.kill === "ack"
    ? { SESSION_DB_CRASH_AT: `${point}@${k}` }
    : {};
  await recordAndKill(run, files, {
    script: EDITOR,
    args: [files.db, files.acks, intents, String(seed)],
    what: "edit steps",
    env,
  });
  const journaled = readAckJournal<EditStep>(intents);
  return checkStates(run, files, {
    judge: (db, lines) => {
      // Steps run one at a time: before a state's instant at most the step after its
      // last acknowledgement was in flight.
      const acks = parseAcks<EditStep>(lines);
      return judgeEdits(run.target, db, { acks, intents: journaled.slice(0, acks.length + 1) });
    },
    resume: resumeEdits(run, journaled),
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
    title: "power-loss fork determinism",
    what: "edit steps",
    kills: ["random", "ack"],
    ackPoints: [REWIND_COMMIT, FORK_COMMIT],
    run: powerLossForkRun,
  }, options);
}
