// Resume after recovery in the power-loss tier: a crash state whose recovered store was
// judged sound is handed, as the crash left it, to a fresh process running the clause's
// own writer (appends, rotations, edit steps), which is SIGKILLed once it acknowledged a
// few operations; then the store is judged again with the acknowledged work of both
// lives. The states to continue are sampled: the ones whose in-flight operation landed
// without its acknowledgement first (where a store's counters can be left behind by the
// crash), then spread over the rest. The move itself is `../moves/resume.ts`.
import { join } from "node:path";
import { countAcks } from "../../harness/ack_journal.ts";
import type { StateCheck, StateJudgement } from "../engine/state_check.ts";
import { declaredPermissions } from "../contract/target_access.ts";
import { spawnFor } from "../engine/run.ts";
import { chooseResumes, continueState, type ResumeCandidate, secondLife } from "../moves/resume.ts";
import type { PowerLossRunOptions } from "./_types.ts";

/** A recovered state's folder, as its second life finds it. */
export interface LifeFiles {
  /** The folder: the second life's run folder. */
  dir: string;
  /** The database as the crash left it (`<dir>/db/store.db`). */
  db: string;
  /** The second life's acknowledgement journal (`<dir>/acks.jsonl`). */
  acks: string;
}

/** The writer of a second life and when it dies. */
export interface SecondWriter {
  /** The writer script. */
  script: URL;
  /** Its arguments after the target. */
  args: string[];
  /** Its acknowledgement journal, when not the folder's `acks.jsonl`. */
  acks?: string;
  /** Acknowledged operations after which it is SIGKILLed (unless it kills itself first). */
  k: number;
}

/**
 * How a power-loss cell continues a recovered state: whether a judgement shows the
 * in-flight operation landed, the second life's writer, and the judge of what both lives
 * left (its problems, `[]` when the store holds both lives' acknowledged work and the
 * clause).
 */
export interface PowerLossResume<J extends StateJudgement = StateJudgement> {
  /** Whether the in-flight operation is in the recovered state without its acknowledgement. */
  landed(judged: J, acks: readonly string[]): boolean;
  /** Whether the clause's writer can continue a sound state (default: every one can). */
  resumable?(judged: J): boolean;
  /** The writer that continues the state in `files` (and anything it needs written first). */
  life(files: LifeFiles, judged: J): SecondWriter;
  /** Judges what the second life left, with the first life's acknowledgements: the problems. */
  judge(files: LifeFiles, acks: readonly string[], judged: J): Promise<string[]>;
}

/** The files of the recovered state in `dir`. */
function lifeFiles(dir: string): LifeFiles {
  return { dir, db: join(dir, "db", "store.db"), acks: join(dir, "acks.jsonl") };
}

/** Continues one state in `dir` in a fresh process, then judges it: the problems. */
async function continueLife<J extends StateJudgement>(
  options: PowerLossRunOptions,
  dir: string,
  state: { candidate: PowerLossCandidate<J>; resume: PowerLossResume<J> },
): Promise<string[]> {
  const { candidate, resume } = state;
  const files = lifeFiles(dir);
  const why = await powerLossLife(options, {
    dir,
    acks: files.acks,
    ...resume.life(files, candidate.judged),
  });
  if (why) return [why];
  return await resume.judge(files, candidate.acks, candidate.judged);
}

/** Every violation and every missing piece of acknowledged work of the checks, in order. */
export function problemsOf(checks: readonly StateCheck[]): string[] {
  return checks.flatMap((check) => [...check.violations, ...check.missing]);
}

/** A sound recovered state of a run: its acknowledgements and what the judge read from it. */
export type PowerLossCandidate<J extends StateJudgement> = ResumeCandidate<{
  /** The acknowledgements made before its instant. */
  acks: readonly string[];
  /** What the judge read from it. */
  judged: J;
}>;

/** How the resumes of one run went. */
export interface ResumeTally {
  /** Distinct recovered states that could be continued. */
  candidates: number;
  /** Continued and judged again. */
  run: number;
  /** Those whose second life failed. */
  failed: number;
  /** The first failure, with its state. */
  first?: string;
}

/**
 * Continues the chosen states one after another (`count` of the candidates); a failing one
 * keeps its folder.
 *
 * @param options The run (its folder: the states go under `resumes/`; leg, target).
 * @param candidates The sound recovered states.
 * @param plan How many to continue, and how.
 * @returns How the resumes went.
 */
export async function resumeStates<J extends StateJudgement>(
  options: PowerLossRunOptions,
  candidates: readonly PowerLossCandidate<J>[],
  plan: { count: number; resume: PowerLossResume<J> },
): Promise<ResumeTally> {
  const { dir } = options;
  const chosen = chooseResumes(candidates, plan.count);
  const tally: ResumeTally = { candidates: candidates.length, run: 0, failed: 0 };
  for (const [i, candidate] of chosen.entries()) {
    const stateDir = join(dir, "resumes", String(i));
    const problems = await continueState(candidate, stateDir, async (stateDir) => {
      try {
        return await continueLife(options, stateDir, { candidate, resume: plan.resume });
      } catch (error) {
        return [`cannot continue: ${error instanceof Error ? error.message : String(error)}`];
      }
    });
    tally.run++;
    if (problems.length) {
      tally.failed++;
      tally.first ??= `${candidate.label}: ${problems.join("; ")} (kept in ${stateDir})`;
    }
  }
  return tally;
}

/** A power-loss second life: a cells' writer on a recovered state's folder. */
export interface PowerLossLife {
  /** The state's folder (its files under `db/`); the child's run folder. */
  dir: string;
  /** The writer script and its arguments after the target. */
  script: URL;
  args: string[];
  /** Its acknowledgement journal. */
  acks: string;
  /** Acknowledged operations after which it is SIGKILLed (unless it kills itself first). */
  k: number;
}

/**
 * Runs a cells' child on a recovered state's folder (no recorder) until it acknowledged
 * `k` operations, then SIGKILLs it (or lets it kill itself): the second life.
 *
 * @param options The run's leg, target, environment and deadline.
 * @param life The folder, the writer, its journal and `k`.
 * @returns Why it could not continue, or `undefined` when it did.
 */
export async function powerLossLife(
  options: PowerLossRunOptions,
  life: PowerLossLife,
): Promise<string | undefined> {
  const { leg, target } = options;
  const permissions = await declaredPermissions(target);
  const spawn = spawnFor({
    leg,
    target,
    runDir: life.dir,
    permissions,
    ...(options.env ? { env: options.env } : {}),
  });
  const { killed, child } = await secondLife({
    spawn: () => spawn(life.script, life.args),
    what: `a fresh process to acknowledge ${life.k} operations on the recovered state`,
    enough: () => countAcks(life.acks) >= life.k,
    observed: () => `${countAcks(life.acks)} acknowledged`,
    ...(options.deadlineMs !== undefined ? { deadlineMs: options.deadlineMs } : {}),
  });
  return killed
    ? undefined
    : `a fresh process could not continue the recovered state: ${child.describe()}`;
}
