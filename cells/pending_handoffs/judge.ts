// Cell 12's judge: pure functions over the children's journals and what a fresh process
// read back. No processes here (see `judge_test.ts`).

/** A handoff state as `getHandoffState` reports it (`null`: never requested). */
export type HandoffState = string | null;

/**
 * A journal line of `children/handoffs.ts`: an operation invoked (`inv`) or answered
 * (`ack`, with the store's answer as a word: `true`, `false`, `threw <Name>`).
 *
 * @example
 * ```ts
 * import type { HandoffEntry } from "./judge.ts";
 * const line: HandoffEntry = { k: "ack", seq: 0, op: "requestHandoff", session: "h01", answer: "true" };
 * ```
 */
export interface HandoffEntry {
  k: "inv" | "ack";
  seq: number;
  op: string;
  session: string;
  answer?: string;
}

/** The state an operation leaves when it answers `true`. */
const AFTER: Record<string, string> = {
  requestHandoff: "pending",
  claimHandoff: "running",
  completeHandoff: "completed",
  failHandoff: "failed",
};

/**
 * Every state each session may be in after a kill: the state its last acknowledged
 * successful operation left (or its state before the life), and, when an operation of it
 * was invoked and not answered, the state that one leaves too.
 *
 * @param start Each session's state before the life.
 * @param entries The journal lines of every child of the life.
 * @returns The possible states, by session.
 * @example
 * ```ts
 * import { possibleStates } from "./judge.ts";
 * const entries = [
 *   { k: "inv" as const, seq: 0, op: "requestHandoff", session: "s" },
 *   { k: "ack" as const, seq: 0, op: "requestHandoff", session: "s", answer: "true" },
 *   { k: "inv" as const, seq: 1, op: "claimHandoff", session: "s" },
 * ];
 * console.log(possibleStates({ s: null }, entries)); // { s: ["pending", "running"] }
 * ```
 */
export function possibleStates(
  start: Readonly<Record<string, HandoffState>>,
  entries: readonly HandoffEntry[],
): Record<string, HandoffState[]> {
  const settled: Record<string, HandoffState> = { ...start };
  const open = new Map<string, HandoffEntry>();
  for (const entry of entries) {
    const key = `${entry.session}#${entry.seq}`;
    if (entry.k === "inv") {
      open.set(key, entry);
      continue;
    }
    open.delete(key);
    if (entry.answer === "true") settled[entry.session] = AFTER[entry.op] ?? null;
  }
  const possible: Record<string, HandoffState[]> = {};
  for (const [session, state] of Object.entries(settled)) possible[session] = [state];
  for (const entry of open.values()) {
    const after = AFTER[entry.op] ?? null;
    const states = possible[entry.session] ??= [null];
    if (!states.includes(after)) states.push(after);
  }
  return possible;
}

/**
 * Why the states read back break what was acknowledged: a session in a state no order of
 * the acknowledged operations (and the one in flight) leaves.
 *
 * @param possible What {@linkcode possibleStates} allows.
 * @param states What `getHandoffState` read, by session.
 * @returns The problems.
 * @example
 * ```ts
 * import { stateProblems } from "./judge.ts";
 * console.log(stateProblems({ s: ["pending"] }, { s: "pending" })); // []
 * ```
 */
export function stateProblems(
  possible: Readonly<Record<string, HandoffState[]>>,
  states: Readonly<Record<string, HandoffState>>,
): string[] {
  const problems: string[] = [];
  for (const [session, allowed] of Object.entries(possible)) {
    const found = states[session] ?? null;
    if (!allowed.includes(found)) {
      problems.push(`${session} is ${found}, not ${allowed.join(" or ")}`);
    }
  }
  return problems;
}

/**
 * Why the pending list is wrong: a session listed more than once, listed in another state
 * than `pending` (by `getHandoffState`, or by what was acknowledged when only one state is
 * possible), or pending and not listed.
 *
 * @param listed The ids `listPendingHandoffs` returned, in order.
 * @param states What `getHandoffState` read, by session.
 * @param possible What {@linkcode possibleStates} allows (an acknowledged request is listed
 *   until claimed; an acknowledged claim never).
 * @returns The problems.
 * @example
 * ```ts
 * import { listProblems } from "./judge.ts";
 * const states = { a: "pending", b: "running" };
 * console.log(listProblems(["a", "b"], states, {})); // ["b is listed, and it is running"]
 * ```
 */
export function listProblems(
  listed: readonly string[],
  states: Readonly<Record<string, HandoffState>>,
  possible: Readonly<Record<string, HandoffState[]>>,
): string[] {
  const problems: string[] = [];
  const counts = new Map<string, number>();
  for (const id of listed) counts.set(id, (counts.get(id) ?? 0) + 1);
  for (const [id, count] of counts) {
    if (count > 1) problems.push(`${id} is listed ${count} times`);
    const state = id in states ? states[id] : "unknown";
    if (state !== "pending") problems.push(`${id} is listed, and it is ${state}`);
    const sure = possible[id];
    if (sure?.length === 1 && sure[0] !== "pending" && state === "pending") {
      problems.push(`${id} is listed, and its last acknowledged operation left it ${sure[0]}`);
    }
  }
  for (const [id, state] of Object.entries(states)) {
    if (state === "pending" && !counts.has(id)) problems.push(`${id} is pending and not listed`);
  }
  for (const [id, sure] of Object.entries(possible)) {
    if (sure.length === 1 && sure[0] === "pending" && !counts.has(id) && states[id] !== "pending") {
      problems.push(`${id}'s request is acknowledged and unclaimed, and it is not listed`);
    }
  }
  return problems;
}
