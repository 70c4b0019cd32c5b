// Resume after recovery: once a recovered state is judged, a fresh process continues the
// clause's own operation on it and the result is crashed (or closed) and judged again, both
// lives' acknowledged work included. A store that reads its past back but loses or corrupts
// the first write after recovery (a next id taken from a value recovery left stale) fails
// here. The SIGKILL cells continue their state in place; the power-loss tier and the
// recorded-call sweep continue a sample of their crash states, each written out as the
// crash left it. Each tier keeps its own judge.
import {
  type Child,
  classifyExit,
  killWhileAlive,
  reapAll,
  TIMED_OUT,
} from "../../harness/child.ts";
import { HarnessError } from "../../harness/harness_error.ts";
import { waitFor } from "../../harness/wait_for.ts";
import { type FileSet, writeImage } from "../../recorder/image.ts";
import type { CellRun } from "../engine/cell.ts";
import { tally } from "../engine/tally.ts";

/** The acknowledged operations a resumed child makes before it kills itself. */
export const RESUMED_OPS = 3;

/**
 * A recovered crash state a fresh process may continue, with what its tier knows of it
 * (`T`: the power-loss tier's acknowledgements and judgement, the sweep's program and call).
 *
 * @example
 * ```ts
 * import type { ResumeCandidate } from "./resume.ts";
 * const candidate: ResumeCandidate<{ acks: string[] }> = {
 *   label: "before #3 (sync)",
 *   files: new Map([["store.db", new Uint8Array(4096)]]),
 *   landed: false,
 *   acks: [],
 * };
 * console.log(candidate.label);
 * ```
 */
export type ResumeCandidate<T extends object = Record<never, never>> = T & {
  /** How the state was made. */
  label: string;
  /** Its files as the crash left them (before any recovery). */
  files: FileSet;
  /** Whether the interrupted operation landed without its acknowledgement (resumed first). */
  landed: boolean;
};

/** After the landed candidates: the others spread evenly, or in their order. */
export type ResumeRest = "spread" | "in order";

/**
 * The candidates to continue, at most `count`: those whose interrupted operation landed
 * without its acknowledgement first (where a store's counters can be left behind by the
 * crash), then the rest, spread evenly over them or in their order.
 *
 * @param candidates One per distinct recovered state that passed.
 * @param count How many to continue.
 * @param rest How the others are picked (default spread).
 * @returns The chosen ones.
 * @example
 * ```ts
 * import { chooseResumes } from "./resume.ts";
 * const states = [0, 1, 2, 3].map((i) => ({ label: `s${i}`, files: new Map(), landed: i === 3 }));
 * console.log(chooseResumes(states, 2).map((c) => c.label)); // ["s3", "s0"]
 * ```
 */
export function chooseResumes<C extends ResumeCandidate>(
  candidates: readonly C[],
  count: number,
  rest: ResumeRest = "spread",
): C[] {
  const landed = candidates.filter((c) => c.landed).slice(0, count);
  const others = candidates.filter((c) => !c.landed);
  const more = Math.min(count - landed.length, others.length);
  if (rest === "in order") return [...landed, ...others.slice(0, Math.max(0, more))];
  const spread = Array.from(
    { length: more },
    (_, i) => others[Math.floor((i * others.length) / more)]!,
  );
  return [...landed, ...spread];
}

/**
 * Continues one candidate: its files written to `<dir>/db` as the crash left them, then
 * `resume(dir)` runs the fresh process and the tier's judge on what it left. The folder is
 * removed when there is no problem and kept as evidence otherwise.
 *
 * @param candidate The recovered state.
 * @param dir A fresh folder for it.
 * @param resume The second life and the judge: the problems (`[]` when both lives hold).
 * @returns The problems.
 * @example
 * ```ts ignore
 * import { continueState } from "./resume.ts";
 * const problems = await continueState(candidate, dir, async (dir) => [] as string[]);
 * ```
 */
export async function continueState(
  candidate: ResumeCandidate,
  dir: string,
  resume: (dir: string) => Promise<string[]>,
): Promise<string[]> {
  writeImage(candidate.files, `${dir}/db`);
  const problems = await resume(dir);
  if (!problems.length) await Deno.remove(dir, { recursive: true }).catch(() => {});
  return problems;
}

/** A fresh process on a recovered state, until it crashes. */
export interface SecondLife {
  /** Starts the process (on the recovered state). */
  spawn(): Child;
  /** What it is waited for as, in messages. */
  what: string;
  /** Whether it acknowledged enough: then it is SIGKILLed (default: it kills itself). */
  enough?(): boolean;
  /** What it had done, for a message at the deadline. */
  observed?(): string;
  /** How long it may take (default 60 s). */
  deadlineMs?: number;
}

/**
 * Runs a second life to its crash: its own SIGKILL right after its last acknowledged
 * operation, or ours once it acknowledged `enough`; reaps it either way.
 *
 * @param life How to start it and when it has done enough.
 * @returns The child, and whether it died by SIGKILL (`false`: it failed, or ended).
 * @example
 * ```ts ignore
 * import { secondLife } from "./resume.ts";
 * const { killed, child } = await secondLife({ spawn: () => ctx.spawn(script, args), what: "appends" });
 * if (!killed) throw new Error(child.describe());
 * ```
 */
export async function secondLife(life: SecondLife): Promise<{ killed: boolean; child: Child }> {
  const child = life.spawn();
  try {
    await waitFor(() => child.exited !== undefined || (life.enough?.() ?? false), {
      what: life.what,
      deadlineMs: life.deadlineMs ?? 60_000,
      ...(life.observed ? { observed: () => life.observed!() } : {}),
    });
    if (child.exited === undefined) {
      await killWhileAlive(child);
      return { killed: true, child };
    }
    return { killed: classifyExit(child.exited).kind === "killed", child };
  } finally {
    await reapAll([child]);
  }
}

/** A cell child continuing a recovered state in place and SIGKILLing itself. */
export interface SelfKillingResume {
  /** The child script: it continues on `db`, and dies right after its last acknowledgement. */
  script: URL;
  /** Its arguments after the target. */
  args: string[];
  /** The database it continues (observed once it died). */
  db: string;
  /** The state's label, in messages and observations. */
  label: string;
  /** How long it may take (default 60 s). */
  deadlineMs?: number;
}

/**
 * Runs a {@linkcode secondLife} of a cell child that SIGKILLs itself right after its last
 * acknowledged operation, counts the kill and observes the leg (at rest: it died between
 * operations). Throws the store's failure when the child died otherwise (its error, its
 * stderr), and a `HarnessError` when it only outlived its lifetime guard.
 *
 * @param ctx The cell's run.
 * @param resume The child, its arguments, the database, the label.
 * @example
 * ```ts ignore
 * import { resumeToSelfKill } from "./resume.ts";
 * await resumeToSelfKill(ctx, { script: WRITER, args: [db, acks, "3"], db, label: "round 2" });
 * ```
 */
export async function resumeToSelfKill(ctx: CellRun, resume: SelfKillingResume): Promise<void> {
  const { killed, child } = await secondLife({
    spawn: () => ctx.spawn(resume.script, resume.args),
    what: `${resume.label}: a fresh process to continue the recovered state`,
    ...(resume.deadlineMs !== undefined ? { deadlineMs: resume.deadlineMs } : {}),
  });
  if (killed) {
    tally(ctx, "sigkills", 1);
    ctx.observeLeg(resume.db, `${resume.label}, resumed`, true);
    return;
  }
  const message =
    `${resume.label}: the process continuing the recovered state failed: ${child.describe()}`;
  const exit = child.exited!;
  if (exit.signal === null && exit.code === TIMED_OUT) throw new HarnessError(message);
  throw new Error(message);
}

/**
 * {@linkcode resumeToSelfKill} as a check of the clause: when the fresh process fails, the
 * step `<label>, resumed: the first <ops> after recovery are taken` fails with its error
 * (an ERROR when only the suite failed) and `false` is returned.
 *
 * @param ctx The cell's run.
 * @param t The test context the step is taken in.
 * @param resume The child and its state, and what its operations are called (`ops`).
 * @returns Whether the second life ended in its own SIGKILL.
 * @example
 * ```ts ignore
 * import { resumedStep } from "./resume.ts";
 * if (!await resumedStep(ctx, t, { ops: "appends", script, args, db, label })) return;
 * ```
 */
export async function resumedStep(
  ctx: CellRun,
  t: Deno.TestContext,
  resume: SelfKillingResume & { ops: string },
): Promise<boolean> {
  try {
    await resumeToSelfKill(ctx, resume);
    return true;
  } catch (error) {
    await t.step(
      `${resume.label}, resumed: the first ${resume.ops} after recovery are taken`,
      () => {
        throw error;
      },
    );
    return false;
  }
}
