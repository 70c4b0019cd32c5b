import { join } from "node:path";
import { readAckJournal } from "../../harness/ack_journal.ts";
import type { StateCheck, StateJudgement } from "../engine/state_check.ts";
import { openTargetStore } from "../contract/target.ts";
import {
  parseAcks,
  type PowerLossOptions,
  type PowerLossRun,
  type PowerLossRunOptions,
} from "../power_loss/record.ts";
import { powerLossKillCell } from "../power_loss/steps.ts";
import { type PowerLossResume, problemsOf } from "../power_loss/resume.ts";
import { countAckEntries, writerRun } from "../power_loss/writer_run.ts";
import { type HandoffEntry, type HandoffState, possibleStates } from "./judge.ts";
import { judgedRead } from "./_read.ts";
import { setUpHandoffs } from "./rounds.ts";
import { HANDOFFS } from "./_children.ts";

/** Operations the second life acknowledges on a recovered state before it is SIGKILLed. */
const SECOND_LIFE = 3;

/** Cell 12's judgement of one state, with what a second life starts from. */
interface HandoffJudgement extends StateJudgement {
  /** `getHandoffState` of each session, as read. */
  states: Record<string, HandoffState>;
  /** Whether the operation in flight (invoked, unanswered) is in the state. */
  landed: boolean;
}

/** Whether the last invoked, unanswered operation left its session in a new state. */
function inflightLanded(
  start: Readonly<Record<string, HandoffState>>,
  entries: readonly HandoffEntry[],
  states: Readonly<Record<string, HandoffState>>,
): boolean {
  const last = entries.at(-1);
  if (last?.k !== "inv") return false;
  const before = possibleStates(start, entries.slice(0, -1))[last.session] ?? [null];
  return !before.includes(states[last.session] ?? null);
}

/**
 * Judges one state with cell 12's judge: each session in a state its acknowledged
 * operations (and the one in flight) leave; `listPendingHandoffs` lists every pending
 * session once and nothing else, every acknowledged and unclaimed request among them and no
 * acknowledged claim; two fresh reads the same, integrity, invariants.
 */
async function judgeHandoffs(
  target: string,
  db: string,
  start: Readonly<Record<string, HandoffState>>,
  entries: readonly HandoffEntry[],
): Promise<HandoffJudgement> {
  const { read, problems, lost, wrong } = await judgedRead(target, db, { start, entries });
  const checks: StateCheck[] = [
    { name: "acknowledged handoffs survive the power loss", violations: [], missing: lost },
    {
      name: "listPendingHandoffs lists every pending handoff once, and nothing else",
      violations: wrong.map((w) => `${w} (listed: ${JSON.stringify(read.listed)})`),
      missing: [],
    },
    { name: "recovery deterministic, integrity and invariants", violations: problems, missing: [] },
  ];
  return {
    checks,
    lost: lost.length,
    states: read.states,
    landed: inflightLanded(start, entries, read.states),
  };
}

/**
 * Cell 12's second life: the handoff worker goes on from the states the judge read, kills
 * itself after a few acknowledged operations, and the store must hold them, its list
 * agreeing.
 */
function resumeHandoffs(run: PowerLossRunOptions & { seed: number }) {
  const resume: PowerLossResume<HandoffJudgement> = {
    landed: (judged) => judged.landed,
    life: ({ dir, db }, judged) => {
      const prefix = join(dir, "more");
      Deno.writeTextFileSync(`${prefix}.start.json`, JSON.stringify(judged.states));
      return {
        script: HANDOFFS,
        args: [db, "random", prefix, `${prefix}.start.json`, String(run.seed + 1), "3"],
        acks: `${prefix}.jsonl`,
        // Two lines an operation: its invocation and its answer; it kills itself after them.
        k: 2 * SECOND_LIFE,
      };
    },
    async judge({ dir, db }, _acks, judged) {
      const more = readAckJournal<HandoffEntry>(`${join(dir, "more")}.jsonl`);
      return problemsOf((await judgeHandoffs(run.target, db, judged.states, more)).checks);
    },
  };
  return resume;
}

/** The handoffs set up before the recording, in every state, and their states. */
async function prepared(target: string, db: string): Promise<Record<string, HandoffState>> {
  const probe = await openTargetStore(target, db);
  const settles = {
    complete: typeof probe.completeHandoff === "function",
    fail: typeof probe.failHandoff === "function",
  };
  await probe.close();
  return setUpHandoffs(target, db, settles);
}

/**
 * One recorded run of cell 12's handoff worker: a file set up with handoffs in every state
 * (part of the baseline), then one worker requesting, claiming, completing and failing them
 * in a seeded random order under the file-system call recorder, journaling each operation
 * when invoked and once answered; SIGKILLed right after a random acknowledged operation
 * past `minAcknowledged` (`ack`, by its own count, so for any store) or at a random moment
 * past them. Every crash state is judged by cell 12's judge against the journal lines
 * before its instant, and a fresh worker continues a few recovered states.
 *
 * @param options Leg, target, folder, kill, thresholds (operations), states.
 * @returns The counts (`acknowledged` in answered operations).
 * @example
 * ```ts ignore
 * import { currentLeg } from "../../harness/legs.ts";
 * import { powerLossHandoffRun } from "./power_loss.ts";
 * const run = await powerLossHandoffRun({
 *   leg: currentLeg(),
 *   target: new URL("../reference_target.ts", import.meta.url).href,
 *   dir: Deno.makeTempDirSync(),
 *   kill: "ack",
 * });
 * console.log(run.losingStates, run.corruptStates, run.statesChecked, run.resumes.run);
 * ```
 */
export function powerLossHandoffRun(options: PowerLossRunOptions): Promise<PowerLossRun> {
  let start: Record<string, HandoffState> = {};
  return writerRun(options, {
    operations: 12,
    // Two journal lines an operation: its invocation and its answer.
    linesPerOperation: 2,
    prepare: async (db, run) => {
      start = await prepared(run.target, db);
      Deno.writeTextFileSync(join(run.dir, "start.json"), JSON.stringify(start));
    },
    writer: ({ files, run, operations, random }) => ({
      script: HANDOFFS,
      args: [
        files.db,
        "random",
        // The worker journals to `<prefix>.jsonl`: the run's acknowledgement journal.
        files.acks.replace(/\.jsonl$/, ""),
        join(run.dir, "start.json"),
        String(run.seed),
        ...(run.kill === "ack" ? [String(operations + Math.floor(random() * operations))] : []),
      ],
      what: "journal lines (two an operation)",
    }),
    judging: (run) => ({
      judge: (db, lines) => judgeHandoffs(run.target, db, start, parseAcks<HandoffEntry>(lines)),
      resume: resumeHandoffs(run),
      acknowledged: countAckEntries,
    }),
  });
}

/**
 * Cell 12 in the power-loss tier: a file set up with handoffs in every state, then the
 * handoff worker under the recorder, SIGKILLed right after an acknowledged operation and at
 * a random moment. In every power-loss state each session is in a state its acknowledged
 * operations (and the one in flight) leave, and `listPendingHandoffs` lists every pending
 * handoff once and nothing else: every acknowledged request not yet claimed, no
 * acknowledged claim; integrity, invariants, two fresh reads the same; a fresh worker
 * continues a few recovered states. A store without the handoff methods is SKIPPED with
 * their names.
 *
 * @param options Target, leg, thresholds (operations), states.
 * @returns The test definitions.
 * @example
 * ```ts ignore
 * import { powerLossHandoffCell } from "./power_loss.ts";
 * const target = new URL("../reference_target.ts", import.meta.url);
 * for (const test of await powerLossHandoffCell({ target })) Deno.test(test);
 * ```
 */
export function powerLossHandoffCell(options: PowerLossOptions): Promise<Deno.TestDefinition[]> {
  return powerLossKillCell({
    id: 12,
    what: "handoff operations",
    run: powerLossHandoffRun,
  }, options);
}
