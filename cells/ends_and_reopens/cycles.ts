// Cell 10's journal, shared by its cycling child and its judge: what the child invoked and
// what the store answered, one line each.
import type { Answer } from "../contract/typed.ts";

/** The session every cycler works on. */
export const CYCLED = "cycled";

/** Sessions beside it that no call on it may touch: one open, one ended with {@linkcode KEPT}. */
export const BYSTANDERS = { open: "bystander-open", ended: "bystander-ended" } as const;

/** The reason the ended bystander ended with. */
export const KEPT = "kept";

/** The reason of a second `endSession` of an ended session: it must never stay. */
export const AGAIN = "again";

/** The error names an append to an ended session may throw. */
export const ENDED_ERRORS: readonly string[] = [
  "SessionEndedError",
  "CompressionSessionClosedError",
];

/**
 * One line of a cycler's journal: an end or a reopen invoked, or a call's answer: `start`
 * (the reopen a life begins with), `append` (to the open session), `end`, `end-again`
 * (a second end), `refused` (an append while ended), `reopen`.
 *
 * @example
 * ```ts
 * import type { CycleEntry } from "./cycles.ts";
 * const ended: CycleEntry = { op: "end", reason: "r1", answer: { threw: false, value: true } };
 * console.log(ended.op); // end
 * ```
 */
export type CycleEntry =
  | { op: "inv"; what: "end" | "reopen" }
  | { op: "start" | "end-again" | "reopen"; answer: Answer }
  | { op: "end"; reason: string; answer: Answer }
  | { op: "append" | "refused"; content: string; answer: Answer };

/** Whether an answer is a refusal of an append to an ended session (a typed error so named). */
export function refusedAsEnded(answer: Answer): boolean {
  return answer.threw && ENDED_ERRORS.includes(answer.name ?? "");
}
