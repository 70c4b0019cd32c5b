// What a race on one session left, read by a fresh process, and how the cell judges it:
// shared by the plain races (`race.ts`) and the racer series (`ensure_series.ts`).
import type { Child } from "../../harness/child.ts";
import { WON } from "../../harness/child.ts";
import { soundness } from "../engine/state_check.ts";
import { answerOf, describeAnswer } from "../contract/typed.ts";
import { openTargetStore } from "../contract/target.ts";
import { refusedAsEnded } from "./cycles.ts";

/** The raced call: `ensureSession`, `endSession` or `reopenSession`. */
export type RacedOp = "ensure" | "end" | "reopen";

/** Prepares the raced session: none to ensure, an open one to end, an ended one to reopen. */
export async function prepareRace(
  target: string,
  db: string,
  race: { op: RacedOp; session: string },
): Promise<void> {
  if (race.op === "ensure") return;
  const store = await openTargetStore(target, db);
  try {
    await store.createSession(race.session);
    if (race.op === "reopen") await store.endSession!(race.session, "before the race");
  } finally {
    await store.close();
  }
}

/** One read of the raced session by a fresh process. */
async function readRaced(target: string, db: string, session: string) {
  const store = await openTargetStore(target, db);
  try {
    const named = store.listSessions
      ? (await store.listSessions()).filter((s) => s.id === session).length
      : store.getSession
      ? (await store.getSession(session) ? 1 : 0)
      : undefined;
    const rows = (await store.getMessages(session)).map((row) => row.content);
    const reason = store.getSession ? (await store.getSession(session))?.endReason : undefined;
    const invariants = store.checkInvariants ? await store.checkInvariants() : [];
    return { named, rows, reason, invariants };
  } finally {
    await store.close();
  }
}

/** The problems of a race's outcome, one list per check (empty when it holds). */
export interface RaceProblems {
  /** Racers that failed (an error, or an exit outside the op's codes). */
  failed: string[];
  /** The outcome: one session with every message (ensure), one winner and its state (end, reopen). */
  outcome: string[];
  /** Two reads differ, integrity, invariants. */
  soundness: string[];
  /** Acknowledged work lost (ensure: racers' messages missing). */
  lost: number;
}

/**
 * Judges a finished race: which racers failed, whether its outcome is one an atomic store
 * gives, and the file's soundness. Ends with an append from a fresh process (the ended
 * session refuses it, the reopened one takes it).
 */
export async function judgeRace(
  target: string,
  race: { op: RacedOp; db: string; session: string; racers: readonly Child[] },
): Promise<RaceProblems> {
  const { op, db, session, racers } = race;
  const codes = op === "ensure" ? [WON] : [WON, 10];
  const failed = racers.filter((c) => c.exited!.signal || !codes.includes(c.exited!.code))
    .map((c) => c.describe());
  const [first, second] = [
    await readRaced(target, db, session),
    await readRaced(target, db, session),
  ];
  const outcome: string[] = [];
  let lost = 0;
  if (op === "ensure") {
    const missing = racers.map((_, i) => i).filter((i) =>
      first.rows.filter((r) => r === racerName(i)).length !== 1
    );
    lost = missing.length;
    if (first.named !== undefined && first.named !== 1) {
      outcome.push(`${first.named} sessions "${session}"`);
    }
    if (missing.length) {
      outcome.push(
        `messages not there once: ${missing.map(racerName).join(", ")} (rows ${
          JSON.stringify(first.rows)
        })`,
      );
    }
  } else {
    const winners = racers.map((c, i) => ({ c, i })).filter(({ c }) => c.exited!.code === WON);
    if (winners.length !== 1) outcome.push(`${winners.length} racers' ${op}Session returned true`);
    const winner = winners.length === 1 ? racerName(winners[0]!.i) : undefined;
    if (op === "end" && winner && first.reason !== undefined && first.reason !== winner) {
      outcome.push(`endReason ${JSON.stringify(first.reason)}, not the winner's "${winner}"`);
    }
    const store = await openTargetStore(target, db);
    const probe = await answerOf(() =>
      store.appendMessage(session, { role: "user", content: "after the race" })
    ).finally(() => store.close());
    if (op === "end" ? !refusedAsEnded(probe) : probe.threw) {
      outcome.push(`after the race an append ${describeAnswer(probe)}`);
    }
  }
  return { failed, outcome, soundness: soundness(db, [first, second], first.invariants), lost };
}

/** Racer i's name (its reason, when it ends the session). */
export function racerName(i: number): string {
  return `racer-${i}`;
}
