import { join } from "node:path";
import { readAckJournal } from "../../harness/ack_journal.ts";
import { runSeed, seededRandom } from "../../harness/seeded_random.ts";
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
import { judgeRotations, type Rotation, type RotationJudgement } from "./judge.ts";
import { powerLossLife, type PowerLossResume, problemsOf } from "../power_loss/resume.ts";
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
    async continue(dir, acks, judged) {
      const db = join(dir, "db", "store.db");
      const more = join(dir, "acks.jsonl");
      const start = String(wholeRotations(judged.sessions));
      const why = await powerLossLife(run, {
        dir,
        script: ROTATOR,
        args: [db, more, start],
        acks: more,
        k: SECOND_LIFE,
      });
      if (why) return [why];
      const first = parseAcks<Rotation>(acks);
      const both = [...first, ...readAckJournal<Rotation>(more)];
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
export async function powerLossRotationRun(options: PowerLossRunOptions): Promise<PowerLossRun> {
  const seed = options.seed ?? runSeed();
  const random = seededRandom(seed);
  const run = { ...options, seed, minAcknowledged: options.minAcknowledged ?? 15 };
  const files = runFiles(run.dir);
  const threshold = run.minAcknowledged;
  // The "ack" kill dies right after a rotation's COMMIT returned, before it is journaled.
  const env: Record<string, string> = run.kill === "ack"
    ? { SESSION_DB_CRASH_AT: `${AFTER_COMMIT}@${threshold + Math.floor(random() * threshold)}` }
    : {};
  await recordAndKill(run, files, {
    script: ROTATOR,
    args: [files.db, files.acks, "0"],
    what: "rotations",
    env,
  });
  return checkStates(run, files, {
    judge: (db, lines) => judgeRotations(run.target, db, { acks: parseAcks<Rotation>(lines) }),
    resume: resumeRotations(run),
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
    title: "power-loss rotation atomicity",
    what: "rotations",
    kills: ["random", "ack"],
    ackPoints: [AFTER_COMMIT],
    run: powerLossRotationRun,
  }, options);
}
