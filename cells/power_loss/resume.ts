// Resume after recovery in the power-loss tier: a crash state whose recovered store was
// judged sound is handed, as the crash left it, to a fresh process running the clause's
// own writer (appends, rotations, edit steps), which is SIGKILLed once it acknowledged a
// few operations; then the store is judged again with the acknowledged work of both
// lives. The states to continue are sampled: the ones whose in-flight operation landed
// without its acknowledgement first (where a store's counters can be left behind by the
// crash), then spread over the rest.
import { join } from "node:path";
import { countAcks } from "../../harness/ack_journal.ts";
import { classifyExit, killWhileAlive, reapAll, spawnChild } from "../../harness/child.ts";
import { legEnv } from "../../harness/legs.ts";
import { waitFor } from "../../harness/wait_for.ts";
import { type FileSet, writeImage } from "../../recorder/image.ts";
import type { StateCheck, StateJudgement } from "../engine/state_check.ts";
import { declaredPermissions, targetAccess } from "../contract/target_access.ts";
import type { PowerLossRunOptions } from "./record.ts";

/**
 * How a power-loss cell continues a recovered state: whether a judgement shows the
 * in-flight operation landed, and the second life itself (its problems, `[]` when the
 * store holds both lives' acknowledged work and the clause).
 */
export interface PowerLossResume<J extends StateJudgement = StateJudgement> {
  /** Whether the in-flight operation is in the recovered state without its acknowledgement. */
  landed(judged: J, acks: readonly string[]): boolean;
  /**
   * Continues the state in `dir` (its files under `dir/db/` as the crash left them) in a
   * fresh process, then judges what that left: the problems.
   */
  continue(dir: string, acks: readonly string[], judged: J): Promise<string[]>;
}

/** Every violation and every missing piece of acknowledged work of the checks, in order. */
export function problemsOf(checks: readonly StateCheck[]): string[] {
  return checks.flatMap((check) => [...check.violations, ...check.missing]);
}

/** A recovered state that could be continued. */
export interface ResumeCandidate<J extends StateJudgement> {
  /** How the state was made. */
  label: string;
  /** Its files as the crash left them. */
  files: FileSet;
  /** The acknowledgements made before its instant. */
  acks: readonly string[];
  /** What the judge read from it. */
  judged: J;
  /** Whether its in-flight operation landed unacknowledged. */
  landed: boolean;
}

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

/** The candidates to continue: the landed ones first, then spread evenly over the rest. */
export function chooseCandidates<J extends StateJudgement>(
  candidates: readonly ResumeCandidate<J>[],
  count: number,
): ResumeCandidate<J>[] {
  const landed = candidates.filter((c) => c.landed).slice(0, count);
  const rest = candidates.filter((c) => !c.landed);
  const more = Math.min(count - landed.length, rest.length);
  const spread = Array.from(
    { length: more },
    (_, i) => rest[Math.floor((i * rest.length) / more)]!,
  );
  return [...landed, ...spread];
}

/** Continues the chosen states one after another; a failing one keeps its folder. */
export async function resumeStates<J extends StateJudgement>(
  dir: string,
  candidates: readonly ResumeCandidate<J>[],
  count: number,
  resume: PowerLossResume<J>,
): Promise<ResumeTally> {
  const chosen = chooseCandidates(candidates, count);
  const tally: ResumeTally = { candidates: candidates.length, run: 0, failed: 0 };
  for (const [i, candidate] of chosen.entries()) {
    const stateDir = join(dir, "resumes", String(i));
    writeImage(candidate.files, join(stateDir, "db"));
    let problems: string[];
    try {
      problems = await resume.continue(stateDir, candidate.acks, candidate.judged);
    } catch (error) {
      problems = [`cannot continue: ${error instanceof Error ? error.message : String(error)}`];
    }
    tally.run++;
    if (problems.length) {
      tally.failed++;
      tally.first ??= `${candidate.label}: ${problems.join("; ")} (kept in ${stateDir})`;
    } else await Deno.remove(stateDir, { recursive: true }).catch(() => {});
  }
  return tally;
}

/**
 * Runs a cells' child on a recovered state's folder (no recorder) until it acknowledged
 * `k` operations, then SIGKILLs it (or lets it kill itself): the second life.
 *
 * @returns Why it could not continue, or `undefined` when it did.
 */
export async function secondLife(
  options: PowerLossRunOptions,
  dir: string,
  script: URL,
  args: string[],
  acks: string,
  k: number,
): Promise<string | undefined> {
  const access = targetAccess(options.target);
  const permissions = await declaredPermissions(options.target);
  const child = spawnChild({
    script,
    args: [options.target, ...args],
    runDir: dir,
    library: options.leg.library,
    env: { ...legEnv(options.leg), ...options.env },
    ...(access.read ? { read: access.read } : {}),
    ...(access.config ? { config: access.config } : {}),
    ...(access.importHosts ? { importHosts: access.importHosts } : {}),
    ...(permissions ? { permissions } : {}),
  });
  try {
    await waitFor(() => child.exited !== undefined || countAcks(acks) >= k, {
      what: `a fresh process to acknowledge ${k} operations on the recovered state`,
      deadlineMs: options.deadlineMs ?? 60_000,
      observed: () => `${countAcks(acks)} acknowledged`,
    });
    if (child.exited === undefined) await killWhileAlive(child);
    else if (classifyExit(child.exited).kind !== "killed") {
      return `a fresh process could not continue the recovered state: ${child.describe()}`;
    }
    return undefined;
  } finally {
    await reapAll([child]);
  }
}
