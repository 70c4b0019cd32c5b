// Two identical writes are two records. Beside a cell's rounds, a child creates a session on a
// file of its own, makes the same write twice (the user turn "yes" appended, or the content
// "Done." recorded for two messages) and is killed right after the second was acknowledged.
// Both must read back, each under the id it was acknowledged with: a store that takes an
// identical write for a retry of the one before (a unique key on the text, a hash of it)
// answers the first id again and stores nothing, losing a turn a user repeated or a message an
// agent sent twice. A second write refused with an error of the store's own class changed
// nothing, as the contract allows; the first must then be there alone.
import { ok } from "node:assert/strict";
import type { Store } from "../contract/target.ts";
import { withStore } from "../contract/with_store.ts";
import type { CellRun } from "../engine/cell.ts";
import { diagnosed, type PatternId } from "../engine/diagnoses.ts";
import { tally } from "../engine/tally.ts";
import { killAfterLastWrite } from "./kill.ts";
import { REPEATED_EFFECT, REPEATED_TURN } from "./_repeated.ts";

/** A record read back: its id, whether it is the repeated write's, and how to show it. */
export interface RepeatedRecord {
  /** The id the store answers for it (a message's id, an obligation's). */
  id: unknown;
  /** Whether it holds what the repeated write wrote. */
  same: boolean;
  /** What a failure shows of it. */
  shown: unknown;
}

/** What the repeated writes left: the problems found, and the pattern they show. */
export interface Repeated {
  /** What is wrong, in words; empty when both writes are kept. */
  problems: string[];
  /** The known failure pattern the problems show, if any. */
  pattern?: PatternId;
}

/** A repeated write: the method, its records' name, and how they read back. */
interface RepeatedKind {
  /** The last-write child's method. */
  method: "appendMessage" | "recordObligation";
  /** What one record is called in the step's name. */
  records: string;
  /** Reads the records back from a fresh open. */
  read: (store: Store, session: string) => Promise<RepeatedRecord[]>;
}

const KINDS = {
  appends: {
    method: "appendMessage",
    records: "message",
    read: async (store, session) =>
      (await store.getMessages(session)).map(({ id, role, content }) => ({
        id,
        same: role === REPEATED_TURN.role && content === REPEATED_TURN.content,
        shown: { id, role, content },
      })),
  },
  obligations: {
    method: "recordObligation",
    records: "obligation",
    read: async (store) =>
      (await store.listObligations!()).map(({ obligationId, content, state }) => ({
        id: obligationId,
        same: content === REPEATED_EFFECT,
        shown: { obligationId, content, state },
      })),
  },
} as const satisfies Record<string, RepeatedKind>;

/**
 * Judges two identical writes: their answers (an id, or a typed refusal) against the records
 * read back.
 *
 * @param answers The store's answers to the two writes.
 * @param records What the session holds after the kill, in the store's order.
 * @returns The problems, and the pattern they show.
 * @example
 * ```ts
 * import { judgeRepeated } from "./repeated.ts";
 * const records = [1, 2].map((id) => ({ id, same: true, shown: id }));
 * console.log(judgeRepeated([1, 2], records).problems); // []
 * ```
 */
export function judgeRepeated(
  answers: readonly unknown[],
  records: readonly RepeatedRecord[],
): Repeated {
  const ids = answers.filter((answer) => typeof answer === "number" || typeof answer === "string");
  const shown = JSON.stringify(records.map((record) => record.shown));
  if (ids.length === 2 && ids[0] === ids[1]) {
    return {
      problems: [
        `the second of two identical writes was answered the first's id ${
          JSON.stringify(ids[0])
        }: it was taken for a retry, and the store holds ${shown}`,
      ],
      pattern: "identical-write-merged",
    };
  }
  const same = records.filter((record) => record.same).map((record) => record.id);
  const kept = records.length === ids.length && same.length === ids.length &&
    ids.every((id) => same.includes(id));
  if (kept) return { problems: [] };
  const problems = [
    `${ids.length} identical write(s) acknowledged as ${
      JSON.stringify(ids)
    }, the store holds ${shown}`,
  ];
  // Fewer records than acknowledged writes: lost; as many, but changed: no known pattern.
  return records.length < ids.length ? { problems, pattern: "ack-before-commit" } : { problems };
}

/**
 * Starts the child beside a cell's rounds: a session, the same write twice, a kill right
 * after the second. Resolves to the judgement of what it left.
 *
 * @param ctx The cell's run.
 * @param kind `appends` (the user turn "yes" twice) or `obligations` ("Done." twice).
 * @returns The judgement, once the child was killed and the file read back.
 */
export function repeatBeside(ctx: CellRun, kind: keyof typeof KINDS): Promise<Repeated> {
  const { method, read }: RepeatedKind = KINDS[kind];
  const session = `repeated-${kind}`;
  const db = ctx.run.store(session);
  const outcome = killAfterLastWrite(ctx, db, {
    writes: [{ method: "createSession", session }, { method, session }, { method, session }],
  }).then(async (answers) => {
    const records = await withStore(ctx.target, db, (store) => read(store, session));
    const judged = judgeRepeated(answers.slice(1), records);
    tally(ctx, "lost", judged.problems.length ? 1 : 0);
    return judged;
  });
  outcome.catch(() => {}); // settled by the run; a run that fails before is not news
  return outcome;
}

/**
 * The step on the repeated writes: two records, each kept under its acknowledged id.
 *
 * @param t The cell's test context.
 * @param kind What was written twice.
 * @param outcome What {@linkcode repeatBeside} returned (a failure of its run fails the step).
 */
export async function repeatedStep(
  t: Deno.TestContext,
  kind: keyof typeof KINDS,
  outcome: Promise<Repeated>,
): Promise<void> {
  const { records } = KINDS[kind];
  await t.step(
    `two identical writes are two ${records}s, kept through a kill right after`,
    async () => {
      const { problems, pattern } = await outcome;
      diagnosed(pattern, () => ok(problems.length === 0, problems.join("; ")));
    },
  );
}
