// Cell 11's judge: pure functions over what the holders were answered and what a fresh
// process read back. No processes here (see `judge_test.ts`).
import { type Answer, describeAnswer, verdict } from "../contract/typed.ts";

/**
 * When the stale holder renews: after its lease lapsed with nobody taking over (`expired`),
 * after another holder took over for a long lease (`taken`), or for a short one whose
 * expiry a third holder's takeover is then judged against (`lapsing`).
 *
 * @example
 * ```ts
 * import type { FenceOrder } from "./judge.ts";
 * const orders: FenceOrder[] = ["expired", "taken", "lapsing"];
 * ```
 */
export type FenceOrder = "expired" | "taken" | "lapsing";

/** The moves the test process makes after the stale renewal, by name. */
export type MoveName =
  | "newTakesOver"
  | "thirdAtOnce"
  | "thirdAfterExpiry"
  | "newPublishes"
  | "newReleases"
  | "thirdPublishes";

/**
 * A move of the new or the third holder: what the store answered, and whether it came too
 * late (or too early) for its expectation to hold whatever the store did.
 *
 * @example
 * ```ts
 * import type { Move } from "./judge.ts";
 * const move: Move = { name: "thirdAtOnce", answer: { threw: false, value: false } };
 * ```
 */
export interface Move {
  /** The move. */
  name: MoveName;
  /** What the store answered. */
  answer: Answer;
  /** Why the move's timing voids its expectation (the run was too slow for the plan). */
  mistimed?: string;
}

/** What each move must be answered, and what it means when it is not. */
const MOVES: Record<MoveName, { want: "accepted" | "refused"; means: string }> = {
  newTakesOver: {
    want: "accepted",
    means: "the new holder could not take over the lapsed lock",
  },
  thirdAtOnce: {
    want: "refused",
    means: "a third holder took the lock over at once: the new holder lost it",
  },
  thirdAfterExpiry: {
    want: "accepted",
    means:
      "a third holder could not take the lock over past the new holder's own expiry: the stale renewal extended the new holder's lease",
  },
  newPublishes: {
    want: "accepted",
    means: "the new holder's publish was refused: it no longer holds the lock",
  },
  newReleases: { want: "accepted", means: "the new holder's release was refused" },
  thirdPublishes: {
    want: "accepted",
    means: "the third holder's publish was refused under the lock it took",
  },
};

/**
 * The moves each order makes after the stale renewal, in order.
 *
 * @example
 * ```ts
 * import { FENCE_MOVES } from "./judge.ts";
 * console.log(FENCE_MOVES.expired); // ["thirdAtOnce", "thirdPublishes"]
 * ```
 */
export const FENCE_MOVES: Readonly<Record<FenceOrder, readonly MoveName[]>> = {
  // Nobody took over: the third holder's takeover of the lapsed lock must succeed at once.
  expired: ["thirdAtOnce", "thirdPublishes"],
  taken: ["thirdAtOnce", "newPublishes", "newReleases"],
  lapsing: ["thirdAtOnce", "thirdAfterExpiry", "thirdPublishes"],
};

/** What a move must be answered in an order (`expired`'s third holder takes a lapsed lock). */
function wanted(order: FenceOrder, name: MoveName): "accepted" | "refused" {
  return order === "expired" && name === "thirdAtOnce" ? "accepted" : MOVES[name].want;
}

/**
 * Why the stale renewal is not a refusal: accepted, or refused with an untyped error.
 *
 * @param answer What the stale holder's `refreshCompressionLock` was answered.
 * @returns The problem, or `undefined` when it was refused (`false` or a typed error).
 * @example
 * ```ts
 * import { staleRenewalProblem } from "./judge.ts";
 * console.log(staleRenewalProblem({ threw: false, value: false })); // undefined
 * console.log(staleRenewalProblem({ threw: false, value: true })); // the stale renewal was accepted: returned true
 * ```
 */
export function staleRenewalProblem(answer: Answer): string | undefined {
  const said = verdict(answer);
  if (said === "accepted") return `the stale renewal was accepted: ${describeAnswer(answer)}`;
  if (said === "untyped") return `the refusal is not typed: ${describeAnswer(answer)}`;
  return undefined;
}

/**
 * What the moves after the stale renewal show changed: each move answered otherwise than
 * an unchanged lock allows. A mistimed move is left out (`mistimed` lists why).
 *
 * @param order The scenario's order.
 * @param moves The moves made, in order (the takeover, when any, first).
 * @returns The problems, and the mistimed moves.
 * @example
 * ```ts
 * import { movesProblems } from "./judge.ts";
 * const refused = { threw: false, value: false };
 * const accepted = { threw: false, value: true };
 * const out = movesProblems("expired", [
 *   { name: "thirdAtOnce", answer: refused },
 *   { name: "thirdPublishes", answer: accepted },
 * ]);
 * console.log(out.problems.length); // 2
 * ```
 */
export function movesProblems(
  order: FenceOrder,
  moves: readonly Move[],
): { problems: string[]; mistimed: string[] } {
  const problems: string[] = [];
  const mistimed: string[] = [];
  for (const move of moves) {
    if (move.mistimed) {
      mistimed.push(`${move.name}: ${move.mistimed}`);
      continue;
    }
    const want = wanted(order, move.name);
    const said = verdict(move.answer);
    if (said === want) continue;
    const means = order === "expired" && move.name === "thirdAtOnce"
      ? "a third holder could not take over the lapsed lock: the stale renewal revived it"
      : MOVES[move.name].means;
    problems.push(`${means} (${move.name} ${describeAnswer(move.answer)})`);
  }
  return { problems, mistimed };
}

/**
 * What a fresh process reads back: sessions, each continuation's messages, the store's
 * invariants.
 *
 * @example
 * ```ts
 * import type { ReadBack } from "./judge.ts";
 * const state: ReadBack = { sessions: [], children: {}, invariants: [] };
 * ```
 */
export interface ReadBack {
  /** Every session: id, parent, end reason, sorted by id. */
  sessions: { id: string; parentSessionId: string | null; endReason: string | null }[];
  /** Each continuation's message contents. */
  children: Record<string, (string | null)[]>;
  /** The store's invariant violations. */
  invariants: string[];
  /** Any other answers read (e.g. a takeover attempt that must be refused). */
  answers?: Record<string, unknown>;
}

/**
 * Why a recovered state fails: the two reads differ, the invariants do not hold, the file
 * is not intact.
 *
 * @param first The first read.
 * @param second The second read, by another fresh process.
 * @param integrity `PRAGMA integrity_check`, or `undefined` when the file is not SQLite.
 * @returns The problems.
 * @example
 * ```ts
 * import { recoveredProblems } from "./judge.ts";
 * const state = { sessions: [], children: {}, invariants: [] };
 * console.log(recoveredProblems(state, state, "ok")); // []
 * ```
 */
export function recoveredProblems(
  first: ReadBack,
  second: ReadBack,
  integrity: string | undefined,
): string[] {
  const problems: string[] = [];
  if (JSON.stringify(first) !== JSON.stringify(second)) {
    problems.push(
      `two fresh reads differ: ${JSON.stringify(first)} then ${JSON.stringify(second)}`,
    );
  }
  if (integrity !== undefined && integrity !== "ok") problems.push(`integrity_check: ${integrity}`);
  if (first.invariants.length) problems.push(`invariants: ${first.invariants.join("; ")}`);
  return problems;
}

/**
 * What the durable holder was told and when (`children/holder.ts`, mode `durable`).
 *
 * @example
 * ```ts
 * import type { DurableAck } from "./judge.ts";
 * const ack: DurableAck = { before: 0, acquiredAt: 5, answer: { threw: false, value: true } };
 * ```
 */
export interface DurableAck {
  /** Just before it took the locks (ms since the epoch). */
  before: number;
  /** Just after it took them, and just before it renewed. */
  acquiredAt: number;
  /** What the renewal was answered. */
  answer: Answer;
}

/**
 * Why the renewal of a live lease is not acknowledged, or `undefined` when it was.
 *
 * @param ack The holder's journal line.
 * @param leaseMs The short lease it renewed.
 * @returns The problem; `late` when it renewed only after the lease could have lapsed.
 * @example
 * ```ts
 * import { liveRenewalProblem } from "./judge.ts";
 * const ack = { before: 0, acquiredAt: 10, answer: { threw: false, value: false } };
 * console.log(liveRenewalProblem(ack, 1000)?.late); // false
 * ```
 */
export function liveRenewalProblem(
  ack: DurableAck,
  leaseMs: number,
): { problem: string; late: boolean } | undefined {
  if (verdict(ack.answer) === "accepted") return undefined;
  const late = ack.acquiredAt >= ack.before + leaseMs;
  return {
    problem: `the renewal of a live lease (${
      ack.acquiredAt - ack.before
    } ms into its ${leaseMs} ms) was not acknowledged: ${describeAnswer(ack.answer)}`,
    late,
  };
}

/**
 * Why the locks read past the short lease show a lost renewal: another holder took over
 * the renewed session's lock, or could not take the one beside it (whose lease was never
 * renewed: a renewal touches only the session named).
 *
 * @param renewed What another holder's takeover of the renewed lock was answered.
 * @param beside What its takeover of the lock beside it was answered.
 * @returns The problems.
 * @example
 * ```ts
 * import { durableProblems } from "./judge.ts";
 * const refused = { threw: false, value: false };
 * const accepted = { threw: false, value: true };
 * console.log(durableProblems(refused, accepted)); // []
 * ```
 */
export function durableProblems(renewed: Answer, beside: Answer): string[] {
  const problems: string[] = [];
  if (verdict(renewed) === "accepted") {
    problems.push(
      `another holder took over the renewed lock once the short lease had passed: the acknowledged renewal was lost (${
        describeAnswer(renewed)
      })`,
    );
  }
  if (verdict(beside) !== "accepted") {
    problems.push(
      `another holder could not take over the lock beside it, never renewed, past its lease: the renewal extended a session it did not name (${
        describeAnswer(beside)
      })`,
    );
  }
  return problems;
}
