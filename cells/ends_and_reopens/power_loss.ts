import { readAckJournal } from "../../harness/ack_journal.ts";
import { soundness, type StateJudgement } from "../engine/state_check.ts";
import {
  parseAcks,
  type PowerLossOptions,
  type PowerLossRun,
  type PowerLossRunOptions,
} from "../power_loss/record.ts";
import { writerRun } from "../power_loss/writer_run.ts";
import { powerLossKillCell } from "../power_loss/steps.ts";
import { type PowerLossResume, problemsOf } from "../power_loss/resume.ts";
import { type CycleEntry, refusedAsEnded } from "./cycles.ts";
import { type CycledState, expectedState, judgeCycled } from "./judge.ts";
import { CYCLER } from "./_children.ts";
import { probeAppends, readPass } from "./_reads.ts";

/** Journal lines of one cycle: append, end (invoked, answered), end again, refused, reopen. */
const CYCLE_LINES = 7;

/** Cell 10's judgement of one state, with whether the end or reopen in flight landed. */
interface CycledJudgement extends StateJudgement {
  landed: boolean;
}

/** The calls the store answered (the journal's other lines are invocations). */
function answered(entries: readonly CycleEntry[]): number {
  return entries.filter((entry) => entry.op !== "inv").length;
}

/** Two recovery passes, then appends from a fresh open: what cell 10's judge reads. */
async function readCycled(target: string, db: string): Promise<CycledState> {
  const first = await readPass(target, db);
  const second = await readPass(target, db);
  return {
    rows: first.rows,
    session: first.session,
    // A state may come before the bystanders were made: one not found is not judged.
    ...await probeAppends(target, db, { content: "probe:power-loss", notFound: undefined }),
    soundness: soundness(db, [first, second], first.invariants),
  };
}

/** A state before the cycler's first journal line: its sessions may not exist yet. */
async function beforeTheJournal(target: string, db: string): Promise<CycledJudgement> {
  const first = await readPass(target, db).catch(() => undefined);
  const second = await readPass(target, db).catch(() => undefined);
  const passes = first && second ? soundness(db, [first, second], first.invariants) : [];
  return {
    checks: [{
      name: "recovery deterministic, integrity ok, invariants hold",
      violations: passes,
      missing: [],
    }],
    lost: 0,
    landed: false,
  };
}

/** Whether the end or reopen in flight (invoked, unanswered) is in the state. */
function inflightLanded(entries: readonly CycleEntry[], state: CycledState): boolean {
  if (entries.at(-1)?.op !== "inv") return false;
  const before = expectedState(entries.slice(0, -1)).state;
  const ended = state.session ? state.session.endedAt !== null : refusedAsEnded(state.probe);
  return (ended ? "ended" : "open") !== before;
}

/** Judges one crash state with cell 10's judge against the journal lines before its instant. */
async function judgeState(
  target: string,
  db: string,
  entries: readonly CycleEntry[],
): Promise<CycledJudgement> {
  // Nothing was journaled: the cycler's setup (its sessions) was not yet done.
  if (entries.length === 0) return beforeTheJournal(target, db);
  const state = await readCycled(target, db);
  return { ...judgeCycled(entries, state), landed: inflightLanded(entries, state) };
}

/**
 * Cell 10's second life: a fresh cycler begins with a reopen, cycles, and kills itself right
 * after its first end; the store must hold both lives' acknowledged ends, reopens and
 * appends, in one state or the other.
 */
function resumeCycles(run: PowerLossRunOptions): PowerLossResume<CycledJudgement> {
  return {
    landed: (judged) => judged.landed,
    // It kills itself right after its first end: never more lines than a cycle and a start.
    life: ({ db, acks }) => ({
      script: CYCLER,
      args: [db, acks, "-", "end@1"],
      k: CYCLE_LINES + 2,
    }),
    async judge({ db, acks: more }, acks) {
      const both = [...parseAcks<CycleEntry>(acks), ...readAckJournal<CycleEntry>(more)];
      return problemsOf(judgeCycled(both, await readCycled(run.target, db)).checks);
    },
  };
}

/**
 * One recorded run of cell 10's cycler: one session cycled through an append, `endSession`,
 * a second end, an append while ended and `reopenSession` under the file-system call
 * recorder, journaling each end and reopen when invoked and every answer; SIGKILLed right
 * after a random acknowledged end or reopen past `minAcknowledged` cycles (`ack`, by its
 * own count, so for any store) or at a random moment past it. Every crash state is judged
 * by cell 10's judge against the journal lines before its instant.
 *
 * @param options Leg, target, folder, kill, thresholds (cycles), states.
 * @returns The counts (`acknowledged` in answered calls).
 * @example
 * ```ts ignore
 * import { currentLeg } from "../../harness/legs.ts";
 * import { powerLossEndsRun } from "./power_loss.ts";
 * const run = await powerLossEndsRun({
 *   leg: currentLeg(),
 *   target: new URL("../reference_target.ts", import.meta.url).href,
 *   dir: Deno.makeTempDirSync(),
 *   kill: "ack",
 * });
 * console.log(run.losingStates, run.corruptStates, run.statesChecked, run.resumes.run);
 * ```
 */
export function powerLossEndsRun(options: PowerLossRunOptions): Promise<PowerLossRun> {
  return writerRun(options, {
    operations: 6,
    linesPerOperation: CYCLE_LINES,
    writer: ({ files, run, operations: cycles, random }) => {
      // A life's reopens count its start: the k-th reopen follows the k-th end.
      const op = run.seed % 2 ? "end" : "reopen";
      const killAt = run.kill === "ack" ? [`${op}@${cycles + Math.floor(random() * cycles)}`] : [];
      return {
        script: CYCLER,
        args: [files.db, files.acks, "-", ...killAt],
        what: "journal lines (seven a cycle)",
      };
    },
    judging: (run) => ({
      judge: (db, lines) => judgeState(run.target, db, parseAcks<CycleEntry>(lines)),
      resume: resumeCycles(run),
      acknowledged: (lines) => answered(parseAcks<CycleEntry>(lines)),
    }),
  });
}

/**
 * Cell 10 in the power-loss tier: the cycler runs under the recorder and is SIGKILLed
 * right after an acknowledged end or reopen and at a random moment. An end or reopen
 * acknowledged before a state's instant must be in it (durability), as must every
 * acknowledged append; every crash state holds one state or the other (ended and refusing
 * appends with the typed error, or open and taking them), the first reason, no row of a
 * refused append, integrity, invariants, recovery deterministic; a fresh cycler continues
 * a few recovered states. A store without `endSession`, `reopenSession` or `ensureSession`
 * is SKIPPED with the names.
 *
 * @param options Target, leg, thresholds (cycles), states.
 * @returns The test definitions.
 * @example
 * ```ts ignore
 * import { powerLossEndsCell } from "./power_loss.ts";
 * const target = new URL("../reference_target.ts", import.meta.url);
 * for (const test of await powerLossEndsCell({ target })) Deno.test(test);
 * ```
 */
export function powerLossEndsCell(options: PowerLossOptions): Promise<Deno.TestDefinition[]> {
  return powerLossKillCell({
    id: 10,
    what: "calls (ends, reopens, appends)",
    run: powerLossEndsRun,
  }, options);
}
