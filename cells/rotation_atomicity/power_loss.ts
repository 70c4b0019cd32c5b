import { readAckJournal } from "../../harness/ack_journal.ts";
import {
  parseAcks,
  type PowerLossOptions,
  type PowerLossRun,
  type PowerLossRunOptions,
} from "../power_loss/record.ts";
import { ackCrashEnv, writerRun } from "../power_loss/writer_run.ts";
import { powerLossKillCell } from "../power_loss/steps.ts";
import { judgeRotations, type Rotation, type RotationJudgement } from "./judge.ts";
import { type PowerLossResume, problemsOf } from "../power_loss/resume.ts";
import type { StoredSession } from "../contract/target.ts";
import { ROTATOR } from "./_children.ts";

/** Rotations the second life acknowledges on a recovered store before it is SIGKILLed. */
const SECOND_LIFE = 2;

/** The whole rotations of a recovered store (`parent-i` ended by compression into `child-i`). */
function wholeRotations(sessions: readonly StoredSession[]): number {
  const byId = new Map(sessions.map((s) => [s.id, s]));
  let n = 0;
  while (
    byId.get(`child-${n}`)?.parentSessionId === `parent-${n}` &&
    byId.get(`parent-${n}`)?.endReason === "compression"
  ) n++;
  return n;
}

/**
 * Cell 3's second life: the rotator continues after the whole rotations the store
 * recovered until SIGKILLed, and every rotation of both lives acknowledged must be whole,
 * the in-flight one whole or absent, no orphan.
 */
function resumeRotations(run: PowerLossRunOptions): PowerLossResume<RotationJudgement> {
  return {
    landed: (judged, acks) => wholeRotations(judged.sessions) > acks.length,
    life: ({ db, acks }, judged) => {
      const start = String(wholeRotations(judged.sessions));
      return { script: ROTATOR, args: [db, acks, start], k: SECOND_LIFE };
    },
    async judge({ db, acks: more }, acks) {
      const both = [...parseAcks<Rotation>(acks), ...readAckJournal<Rotation>(more)];
      return problemsOf((await judgeRotations(run.target, db, { acks: both })).checks);
    },
  };
}

const AFTER_COMMIT = "publishCompressionChild:afterCommit";

/**
 * One recorded run of cell 3's rotator: it rotates `parent-i` into `child-i` under the
 * file-system call recorder and is SIGKILLed (at a random moment past `minAcknowledged` rotations,
 * or by the crash point `publishCompressionChild:afterCommit` right after a commit);
 * then every crash state is checked by the judge of the SIGKILL cell 3: no orphan,
 * every rotation whole or absent, the whole ones a prefix, and with durability every
 * acknowledged one whole.
 *
 * @param options Leg, target, folder, kill, thresholds, states.
 * @returns The counts.
 * @example
 * ```ts
 * import { currentLeg } from "../../harness/legs.ts";
 * import { powerLossRotationRun } from "./power_loss.ts";
 * const run = await powerLossRotationRun({
 *   leg: currentLeg(),
 *   target: new URL("../reference_target.ts", import.meta.url).href,
 *   dir: Deno.makeTempDirSync(),
 *   kill: "ack",
 * });
 * console.log(run.losingStates, run.corruptStates, run.statesChecked, run.resumes.run);
 * ```
 */
export function powerLossRotationRun(options: PowerLossRunOptions): Promise<PowerLossRun> {
  return writerRun(options, {
    operations: 15,
    writer: ({ files, operations, random, run }) => {
      // The "ack" kill dies right after a rotation's COMMIT returned, before it is journaled.
      const env = ackCrashEnv(
        run,
        AFTER_COMMIT,
        () => operations + Math.floor(random() * operations),
      );
      return { script: ROTATOR, args: [files.db, files.acks, "0"], what: "rotations", env };
    },
    judging: (run) => ({
      judge: (db, lines) => judgeRotations(run.target, db, { acks: parseAcks<Rotation>(lines) }),
      resume: resumeRotations(run),
    }),
  });
}

/**
 * Cell 3 in the power-loss tier: the rotator runs under the recorder and is
 * SIGKILLed at a random moment and right after a rotation's COMMIT. Every acknowledged
 * rotation must be whole in every power-loss state after it; in every crash state each rotation is
 * whole or absent (never a parent ended by compression without its child), the whole
 * ones a prefix, recovery deterministic, integrity and invariants hold.
 *
 * @param options Target, leg, thresholds, states.
 * @returns The test definitions.
 * @example
 * ```ts ignore
 * import { powerLossRotationCell } from "./power_loss.ts";
 * const target = new URL("../reference_target.ts", import.meta.url);
 * for (const test of await powerLossRotationCell({ target })) Deno.test(test);
 * ```
 */
export function powerLossRotationCell(
  options: PowerLossOptions,
): Promise<Deno.TestDefinition[]> {
  return powerLossKillCell({
    id: 3,
    what: "rotations",
    kills: ["random", "ack"],
    ackPoints: [AFTER_COMMIT],
    run: powerLossRotationRun,
  }, options);
}
