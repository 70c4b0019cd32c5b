// The parent side of `children/calls.ts`: a list of store calls made in a fresh process,
// and what each answered, read back from its journal.
import { readAckJournal } from "../../harness/ack_journal.ts";
import { classifyExit } from "../../harness/child.ts";
import type { CellRun } from "../engine/cell.ts";
import { killReadyAndObserve, untilExited } from "../moves/kill.ts";
import type { Answer } from "../contract/typed.ts";
import { CALLS } from "./_children.ts";

/** One store call the child makes: a method of the store and its arguments. */
export interface Call {
  /** What the call is, for the journal and the steps. */
  label: string;
  /** The store method. */
  method: string;
  /** Its arguments (JSON). */
  args: unknown[];
}

/**
 * A call's arguments with the symbolic ones replaced: `{ $answer: i }` by what call `i`
 * returned (a number), `{ $past: true }` by one past every numeric answer so far.
 *
 * @example
 * ```ts
 * import { resolveArgs } from "./_calls.ts";
 * console.log(resolveArgs(["s", { $past: true }, { $answer: 0 }], [4, 7, "x"])); // ["s", 8, 4]
 * ```
 */
export function resolveArgs(args: readonly unknown[], answers: readonly unknown[]): unknown[] {
  const ids = answers.filter((a) => typeof a === "number" || typeof a === "string")
    .map(Number).filter(Number.isFinite);
  return args.map((arg) => {
    if (typeof arg !== "object" || arg === null) return arg;
    if ("$answer" in arg) return Number(answers[Number(arg.$answer)]);
    if ("$past" in arg) return Math.max(0, ...ids) + 1;
    return arg;
  });
}

/** What the child journaled for one call (the open first, labelled `open`). */
export interface Answered {
  /** The call's label. */
  label: string;
  /** What it returned or threw; absent when the store lacks the method. */
  answer?: Answer;
  /** The store lacks the method. */
  missing?: true;
}

/** How {@linkcode callsInChild} ends the child. */
export interface CallsRun {
  /** The database file. */
  db: string;
  /** The calls, in order. */
  calls: readonly Call[];
  /** A name for its files, unique in the run. */
  name: string;
  /** SIGKILL it (asserted alive) right after its last call; else it closes the store and exits 0. */
  kill?: boolean;
}

/**
 * Makes `run.calls` in a fresh child process and returns what it journaled (the open
 * first). A killed child is observed for the leg and counted; one that closes must exit 0.
 *
 * @example
 * ```ts ignore
 * const answers = await callsInChild(ctx, { db, name: "reads", calls: [read] });
 * ```
 */
export async function callsInChild(ctx: CellRun, run: CallsRun): Promise<Answered[]> {
  const journal = ctx.run.file(`${run.name}.jsonl`);
  const ready = ctx.run.file(`${run.name}.ready`);
  const child = ctx.spawn(CALLS, [
    run.db,
    journal,
    run.kill ? ready : "-",
    JSON.stringify(run.calls),
  ]);
  if (run.kill) {
    await killReadyAndObserve(ctx, child, {
      ready,
      what: `${run.name}: the calls made`,
      db: run.db,
      at: `killed after ${run.name}`,
    });
  } else {
    await untilExited(child, `${run.name}: the calls made and the store closed`);
    const exit = classifyExit(child.exited!);
    if (exit.kind !== "won") {
      throw new Error(`The child making ${run.name} did not exit 0: ${child.describe()}`);
    }
  }
  return readAckJournal<Answered>(journal);
}
