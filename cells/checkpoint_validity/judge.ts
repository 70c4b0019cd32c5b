// Cell 13's judgement, as pure functions of what the children journaled and what a fresh
// process read: a refused write, a store unchanged by refusals, a planted state refused.
import { type Answer, describeAnswer, GENERIC_ERRORS, verdict } from "../contract/typed.ts";
import type { Answered } from "./_calls.ts";
import type { StoreState } from "./_store_state.ts";

/** A refused write: `append` must throw (a return is an acknowledgement), `fork` may return `false`/`null`. */
export type RefusedWrite = "append" | "fork";

/**
 * Why a write the store must refuse was not refused with a typed error: an
 * `appendMessage` that returned (it acknowledged), a `forkSession` that returned a branch,
 * or an error of a generic class (`Error`, `TypeError`, `SqliteError`, …), which a caller
 * cannot tell from a crash of the store (`cells/contract/typed.ts`).
 *
 * @param kind The write.
 * @param answer What it returned or threw.
 * @returns The problems, empty when it was refused with a typed error.
 * @example
 * ```ts
 * import { refusalProblems } from "./judge.ts";
 * console.log(refusalProblems("append", { threw: true, name: "SessionNotFoundError", message: "no" })); // []
 * console.log(refusalProblems("append", { threw: true, name: "Error", message: "no" }).length); // 1
 * ```
 */
export function refusalProblems(kind: RefusedWrite, answer: Answer | undefined): string[] {
  if (!answer) return ["the child journaled no answer"];
  const said = kind === "append" && !answer.threw ? "accepted" : verdict(answer);
  if (said === "accepted") return [`it was accepted: ${describeAnswer(answer)}`];
  if (said === "untyped") return [`the refusal is not typed: ${describeAnswer(answer)}`];
  return [];
}

/**
 * What changed between two reads of a store by refused writes: a session's messages, a
 * session listed that was not (or gone), and any session the writes named (`created`)
 * that now exists or holds messages.
 *
 * @param before The store before the writes.
 * @param after The store after them, read by a fresh process.
 * @param created The sessions the refused writes would have created.
 * @returns The changes, empty when none.
 * @example
 * ```ts
 * import { unchangedProblems } from "./judge.ts";
 * const state = { messages: { s: [[1, "user", "s0"]] }, listed: ["s"], exists: {}, invariants: [] };
 * console.log(unchangedProblems(state, state, ["ghost"])); // []
 * ```
 */
export function unchangedProblems(
  before: StoreState,
  after: StoreState,
  created: readonly string[],
): string[] {
  const problems: string[] = [];
  for (const [id, rows] of Object.entries(before.messages)) {
    const now = after.messages[id];
    if (JSON.stringify(now) !== JSON.stringify(rows)) {
      problems.push(
        `session ${id}'s messages changed: ${JSON.stringify(rows)} -> ${JSON.stringify(now)}`,
      );
    }
  }
  if (before.listed && after.listed) {
    const added = after.listed.filter((id) => !before.listed!.includes(id));
    const gone = before.listed.filter((id) => !after.listed!.includes(id));
    if (added.length) problems.push(`listSessions lists new session(s): ${added.join(", ")}`);
    if (gone.length) problems.push(`listSessions no longer lists: ${gone.join(", ")}`);
  }
  for (const id of created) {
    if (after.exists[id] === true) problems.push(`getSession finds session ${id}`);
    const rows = after.messages[id];
    if (Array.isArray(rows) && rows.length) {
      problems.push(`session ${id} holds ${rows.length} message(s): ${JSON.stringify(rows)}`);
    }
  }
  return problems;
}

/** An appended message a resume made: its session, content and returned id. */
export interface Appended {
  /** The session. */
  session: string;
  /** The content. */
  content: string;
  /** The id the store returned. */
  id: number;
}

/**
 * Why a resume's appends did not land as acknowledged: each session holds exactly its
 * earlier messages plus the appended one, whose id is above every earlier id; every other
 * session unchanged; invariants empty.
 *
 * @param before The recovered store before the resume.
 * @param after The store after the resumer was killed, read by a fresh process.
 * @param appended What the resumer appended and was acknowledged.
 * @returns The problems, empty when the resume held.
 * @example
 * ```ts
 * import { resumeProblems } from "./judge.ts";
 * const before = { messages: { s: [[1, "user", "s0"]] }, listed: null, exists: {}, invariants: [] };
 * const after = { ...before, messages: { s: [[1, "user", "s0"], [2, "user", "r"]] } };
 * console.log(resumeProblems(before, after, [{ session: "s", content: "r", id: 2 }])); // []
 * ```
 */
export function resumeProblems(
  before: StoreState,
  after: StoreState,
  appended: readonly Appended[],
): string[] {
  const problems: string[] = [];
  const earlier = Object.values(before.messages).flatMap((rows) =>
    Array.isArray(rows) ? rows.map((row) => Number((row as unknown[])[0])) : []
  );
  const top = Math.max(0, ...earlier);
  const want: StoreState = { ...before, messages: { ...before.messages } };
  for (const { session, content, id } of appended) {
    if (!(id > top)) problems.push(`the append to ${session} got id ${id}, not above ${top}`);
    const rows = want.messages[session];
    want.messages[session] = [...Array.isArray(rows) ? rows : [], [id, "user", content]];
  }
  problems.push(...unchangedProblems(want, after, []));
  problems.push(...(after.invariants ?? []).map((p) => `invariant: ${p}`));
  return problems;
}

/** The labels of the calls made on a planted store: its report, its reads, its writes. */
export const PLANTED_LABELS = {
  invariants: "checkInvariants",
  read: "read: ",
  write: "write: ",
} as const;

function typedThrow(answer: Answer): boolean {
  return answer.threw && !GENERIC_ERRORS.has(answer.name ?? "");
}

/** How a fresh process refused a planted state, or why it did not. */
export interface PlantedJudgement {
  /** How it refused (`open`, `checkInvariants`, `reads`), or `null`. */
  refusedBy: "open" | "checkInvariants" | "reads" | null;
  /** Why it did not refuse, or refused untyped. */
  refusal: string[];
  /** Writes to the affected session accepted with no report first, or refused untyped. */
  writes: string[];
}

/**
 * Judges what a fresh process made of a planted state: it refused it when the open threw
 * a typed error, `checkInvariants` reported something (the store passed its own checks
 * before the plant) or threw typed, or every read of the affected session threw a typed
 * error; and each write to the affected session threw a typed error or came after such a
 * report. Any generic error is a problem.
 *
 * @param affected The session the violation is in.
 * @param answers The child's journal: the open, `checkInvariants`, the reads, the writes.
 * @returns The judgement.
 * @example
 * ```ts
 * import { judgePlanted } from "./judge.ts";
 * const judged = judgePlanted("ghost", [
 *   { label: "open", answer: { threw: false, value: null } },
 *   { label: "checkInvariants", answer: { threw: false, value: [] } },
 *   { label: "read: getMessages", answer: { threw: false, value: [{ id: 9 }] } },
 * ]);
 * console.log(judged.refusedBy, judged.refusal.length); // null 1
 * ```
 */
export function judgePlanted(affected: string, answers: readonly Answered[]): PlantedJudgement {
  const open = answers.find((a) => a.label === "open")?.answer;
  if (!open) return { refusedBy: null, refusal: ["the child journaled no open"], writes: [] };
  if (open.threw) {
    return typedThrow(open) ? { refusedBy: "open", refusal: [], writes: [] } : {
      refusedBy: null,
      refusal: [`the open is not typed: ${describeAnswer(open)}`],
      writes: [],
    };
  }
  const refusal: string[] = [];
  const report = answers.find((a) => a.label === PLANTED_LABELS.invariants)?.answer;
  if (report?.threw && !typedThrow(report)) {
    refusal.push(`checkInvariants is not typed: ${describeAnswer(report)}`);
  }
  const reported = report !== undefined &&
    (typedThrow(report) || (Array.isArray(report.value) && report.value.length > 0));
  const reads = answers.filter((a) => a.label.startsWith(PLANTED_LABELS.read) && a.answer);
  for (const read of reads) {
    if (read.answer!.threw && !typedThrow(read.answer!)) {
      refusal.push(`${read.label} is not typed: ${describeAnswer(read.answer!)}`);
    }
  }
  const readsRefused = reads.length > 0 && reads.every((r) => typedThrow(r.answer!));
  if (!reported && !readsRefused) {
    const said = report ? describeAnswer(report) : "no checkInvariants";
    const served = reads.map((r) => `${r.label} ${describeAnswer(r.answer!)}`).join("; ");
    refusal.push(`${affected} served as if whole (checkInvariants ${said}): ${served}`);
  }
  const writes: string[] = [];
  for (const write of answers.filter((a) => a.label.startsWith(PLANTED_LABELS.write))) {
    if (!write.answer) continue;
    const kind: RefusedWrite = write.label.includes("appendMessage") ? "append" : "fork";
    const answer = describeAnswer(write.answer);
    if (write.answer.threw && !typedThrow(write.answer)) {
      writes.push(`${write.label} to ${affected}: the refusal is not typed: ${answer}`);
    } else if (refusalProblems(kind, write.answer).length && !reported) {
      writes.push(`${write.label} to ${affected} accepted with no report first: ${answer}`);
    }
  }
  const refusedBy = reported ? "checkInvariants" : readsRefused ? "reads" : null;
  return { refusedBy, refusal, writes };
}

/**
 * A journal as two recovery passes compare it: labels and answers, error messages left
 * out (they may carry a time or a path).
 *
 * @param answers A child's journal.
 * @returns The comparable form.
 * @example
 * ```ts
 * import { comparable } from "./judge.ts";
 * console.log(comparable([{ label: "open", answer: { threw: true, name: "E", message: "at 12:00" } }]));
 * // [["open", true, "E", undefined]]
 * ```
 */
export function comparable(answers: readonly Answered[]): unknown[] {
  return answers.map((a) => [a.label, a.answer?.threw, a.answer?.name, a.answer?.value]);
}
