// Clause 10's judge of one recovered file of a cycler: the store's answers were the
// contract's; an acknowledged end or reopen survives; the session is in one state or the
// other (ended and refusing appends, or open and taking them), never half; the first
// reason stays; no refused append left a row and every acknowledged one is there;
// recovery is deterministic and the file sound.
import { checkOf, type StateCheck, type StateJudgement } from "../engine/state_check.ts";
import { type Answer, describeAnswer, verdict } from "../contract/typed.ts";
import type { StoredMessage } from "../contract/target.ts";
import { AGAIN, type CycleEntry, KEPT, refusedAsEnded } from "./cycles.ts";

/** The session as a fresh process reads it, and an append it then tries. */
export interface CycledState {
  /** The active rows. */
  rows: Pick<StoredMessage, "id" | "content">[];
  /** `getSession`'s end, or `undefined` when the store has no `getSession`. */
  session?: { endedAt: number | null; endReason: string | null } | undefined;
  /** What an append from a fresh process answered, after the reads. */
  probe: Answer;
  /** Violations of the file's soundness: the passes differ, integrity, invariants. */
  soundness: readonly string[];
  /**
   * Appends to the sessions beside it (the open one must take it, the ended one refuse it),
   * and the ended one's reason when the store has `getSession`.
   */
  bystanders?: { open: Answer; ended: Answer; endedReason?: string | null | undefined } | undefined;
}

/** What the journal says the state must be: `either` while an end or reopen was in flight. */
export type Expected = "ended" | "open" | "either";

/** The state after one more entry of the journal. */
function next(state: Expected, entry: CycleEntry): Expected {
  if (entry.op === "inv") return "either";
  const yes = !entry.answer.threw && entry.answer.value === true;
  if (entry.op === "end") return yes ? "ended" : state;
  if (entry.op === "reopen" || entry.op === "start") return yes ? "open" : state;
  return state;
}

/** The state the journal leaves, and the reason of the end that must stay (when known). */
export function expectedState(
  journal: readonly CycleEntry[],
): { state: Expected; reason?: string } {
  let state: Expected = "open";
  let reason: string | undefined;
  let before: Expected = "open";
  for (const entry of journal) {
    if (entry.op === "inv") {
      before = state;
      state = "either";
      continue;
    }
    const done = entry.op === "end" || entry.op === "reopen" || entry.op === "start";
    state = next(done ? before : state, entry);
    if (entry.op === "end" && state === "ended") reason = entry.reason;
    if (state !== "ended") reason = undefined;
  }
  return { state, ...(reason && state === "ended" ? { reason } : {}) };
}

/** The answers the contract gives, in order: the first one that differs, per kind. */
function wrongAnswers(journal: readonly CycleEntry[]): string[] {
  const wrong = new Map<string, string>();
  const put = (op: string, text: string) => wrong.has(op) || wrong.set(op, text);
  let state: Expected = "open";
  let before: Expected = "open";
  for (const entry of journal) {
    if (entry.op === "inv") [before, state] = [state, "either"];
    if (entry.op === "inv") continue;
    const was = entry.op === "end" || entry.op === "reopen" || entry.op === "start"
      ? before
      : state;
    state = next(was, entry);
    const said = describeAnswer(entry.answer);
    if (entry.op === "start" && was !== "either" && entry.answer.value !== (was === "ended")) {
      put("start", `reopenSession of the ${was} session ${said}, not ${was === "ended"}`);
    }
    if (entry.op === "start") continue;
    if (entry.op === "end" && entry.answer.value !== true) {
      put("end", `endSession of the open session ${said}, not true`);
    }
    if (entry.op === "end-again" && (entry.answer.threw || entry.answer.value !== false)) {
      put("end-again", `a second endSession ${said}, not false`);
    }
    if (entry.op === "refused" && !refusedAsEnded(entry.answer)) {
      put("refused", `an append to the ended session ${said}, not SessionEndedError`);
    }
    if (entry.op === "reopen" && entry.answer.value !== true) {
      put("reopen", `reopenSession of the ended session ${said}, not true`);
    }
    if (entry.op === "append" && verdict(entry.answer) !== "accepted") {
      put("append", `an append to the open (reopened) session ${said}`);
    }
  }
  return [...wrong.values()];
}

/** The state a fresh process sees: from `getSession` when the store has it, else the probe. */
function observed(state: CycledState): "ended" | "open" | "untyped" {
  if (state.session) return state.session.endedAt === null ? "open" : "ended";
  return refusedAsEnded(state.probe) ? "ended" : state.probe.threw ? "untyped" : "open";
}

/** Ended but taking appends, open but refusing them, an end without a reason. */
function halfStates(state: CycledState): string[] {
  const problems: string[] = [];
  const probe = refusedAsEnded(state.probe) ? "ended" : state.probe.threw ? "untyped" : "open";
  const seen = observed(state);
  if (probe === "untyped") problems.push(`an append ${describeAnswer(state.probe)} (untyped)`);
  else if (state.session && probe !== seen) {
    problems.push(
      `getSession says ${seen} (endedAt ${state.session.endedAt}, endReason ${
        JSON.stringify(state.session.endReason)
      }) but an append ${describeAnswer(state.probe)}`,
    );
  }
  const session = state.session;
  if (session && (session.endedAt === null) !== (session.endReason === null)) {
    problems.push(`endedAt ${session.endedAt} with endReason ${JSON.stringify(session.endReason)}`);
  }
  return problems;
}

/** The open bystander takes an append, the ended one refuses it and keeps its reason. */
function bystanderProblems(bystanders: NonNullable<CycledState["bystanders"]>): string[] {
  const problems: string[] = [];
  if (verdict(bystanders.open) !== "accepted") {
    problems.push(`an append to the open session beside it ${describeAnswer(bystanders.open)}`);
  }
  if (!refusedAsEnded(bystanders.ended)) {
    problems.push(`an append to the ended session beside it ${describeAnswer(bystanders.ended)}`);
  }
  if (bystanders.endedReason !== undefined && bystanders.endedReason !== KEPT) {
    problems.push(
      `the ended session beside it has endReason ${JSON.stringify(bystanders.endedReason)}`,
    );
  }
  return problems;
}

/** Rows of refused appends, and acknowledged appends missing or under another id. */
function appendProblems(journal: readonly CycleEntry[], state: CycledState): string[] {
  const byContent = new Map(state.rows.map((row) => [row.content, row.id]));
  const landed = state.rows.filter((row) => row.content?.endsWith(":refused"));
  const lost = journal.flatMap((entry) =>
    entry.op === "append" && !entry.answer.threw &&
      byContent.get(entry.content) !== entry.answer.value
      ? [`acknowledged append ${entry.content} (id ${entry.answer.value}) is missing or moved`]
      : []
  );
  return [
    ...landed.map((row) => `the refused append ${row.content} left row ${row.id}`),
    ...lost.slice(0, 3),
  ];
}

/**
 * Judges one recovered file of a cycler.
 *
 * @param journal The cycler's journal (every life), with the test process's acknowledged probes.
 * @param state What a fresh process read, and its probe's answer.
 * @returns The checks, one step each, and how many acknowledged operations are lost.
 * @example
 * ```ts
 * import { judgeCycled } from "./judge.ts";
 * const ended = { threw: true, name: "SessionEndedError", message: "ended" };
 * const bystanders = { open: { threw: false, value: 2 }, ended };
 * const state = { rows: [], probe: { threw: false, value: 1 }, soundness: [], bystanders };
 * const { checks } = judgeCycled([], state);
 * console.log(checks.every((c) => !c.violations.length && !c.missing.length)); // true
 * ```
 */
export function judgeCycled(journal: readonly CycleEntry[], state: CycledState): StateJudgement {
  const expected = expectedState(journal);
  const seen = observed(state);
  const lostEnd = expected.state !== "either" && seen !== "untyped" && seen !== expected.state;
  const reason = state.session?.endReason ?? null;
  const appends = appendProblems(journal, state);
  const checks: StateCheck[] = [
    checkOf("the store's answers", wrongAnswers(journal)),
    {
      name: `an acknowledged end or reopen survives: expected ${expected.state}`,
      pattern: "ack-before-commit",
      violations: [],
      missing: lostEnd ? [`the session is ${seen}`] : [],
    },
    checkOf("one state or the other: ended refuses appends, open takes them", halfStates(state)),
    checkOf(
      "the first reason stays",
      reason === AGAIN
        ? [`endReason is "${AGAIN}", the second endSession's`]
        : expected.reason && seen === "ended" && state.session && reason !== expected.reason
        ? [`endReason ${JSON.stringify(reason)}, ended with "${expected.reason}"`]
        : [],
    ),
    checkOf("no refused append left a row; every acknowledged append there", appends),
    ...(state.bystanders
      ? [checkOf("the sessions beside it untouched", bystanderProblems(state.bystanders))]
      : []),
    checkOf("recovery deterministic, integrity ok, invariants hold", [...state.soundness]),
  ];
  const lost = (lostEnd ? 1 : 0) + appends.filter((p) => p.startsWith("acknowledged")).length;
  return { checks, lost };
}
