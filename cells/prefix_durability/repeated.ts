// Two identical appends are two messages. Beside round 1, a child creates a session on a file
// of its own, appends the same user turn twice and is killed right after the second was
// acknowledged. Both must read back, each under the id it was acknowledged with: a store that
// takes an identical message for a retry of the one before (a unique key on the text, a hash
// of it) answers the first id again and stores nothing, losing a turn a user really repeated.
// A second append refused with an error of the store's own class changed nothing, as the
// contract allows; the first must then be there alone.
import { ok } from "node:assert/strict";
import type { StoredMessage } from "../contract/target.ts";
import { withStore } from "../contract/with_store.ts";
import type { CellRun } from "../engine/cell.ts";
import { diagnosed, type PatternId } from "../engine/diagnoses.ts";
import { killAfterLastWrite } from "../moves/kill.ts";
import { REPEATED_TURN } from "../moves/_repeated_turn.ts";

/** The session the identical appends go to. */
const SESSION = "cell1-repeated";

/** What the repeated appends left: the problems found, and the pattern they show. */
export interface Repeated {
  problems: string[];
  pattern?: PatternId;
}

/**
 * Judges the two identical appends: their answers (an id, or a typed refusal) against the
 * messages read back.
 *
 * @param answers The store's answers to the two appends.
 * @param rows The session's messages read back after the kill.
 * @returns The problems, and the pattern they show.
 * @example
 * ```ts
 * import { judgeRepeated } from "./repeated.ts";
 * const rows = [1, 2].map((id) => ({ id, role: "user", content: "yes" }));
 * console.log(judgeRepeated([1, 2], rows).problems); // []
 * ```
 */
export function judgeRepeated(
  answers: readonly unknown[],
  rows: readonly StoredMessage[],
): Repeated {
  const ids = answers.filter((answer): answer is number => typeof answer === "number");
  const same = rows.filter((row) =>
    row.role === REPEATED_TURN.role && row.content === REPEATED_TURN.content
  );
  const shown = JSON.stringify(rows.map(({ id, role, content }) => ({ id, role, content })));
  if (ids.length === 2 && ids[0] === ids[1]) {
    return {
      problems: [
        `the second of two identical appends was answered the first's id ${
          ids[0]
        }: it was taken for a retry, and the session holds ${shown}`,
      ],
      pattern: "identical-append-merged",
    };
  }
  const problems = rows.length === ids.length && same.length === ids.length &&
      same.every((row, i) => row.id === ids[i])
    ? []
    : [
      `${ids.length} identical append(s) acknowledged as ids ${
        JSON.stringify(ids)
      }, the session holds ${shown}`,
    ];
  // Fewer messages than acknowledged appends: lost; as many, but changed: no known pattern.
  return problems.length && rows.length < ids.length
    ? { problems, pattern: "ack-before-commit" }
    : { problems };
}

/**
 * Starts the child beside round 1: a session, the same user turn appended twice, a kill right
 * after the second. Resolves to the judgement of what it left.
 */
export function repeatBeside(ctx: CellRun): Promise<Repeated> {
  const db = ctx.run.store("repeated");
  const outcome = killAfterLastWrite(ctx, db, {
    writes: [
      { method: "createSession", session: SESSION },
      { method: "appendMessage", session: SESSION },
      { method: "appendMessage", session: SESSION },
    ],
  }).then(async (answers) =>
    judgeRepeated(
      answers.slice(1),
      await withStore(ctx.target, db, async (store) => await store.getMessages(SESSION)),
    )
  );
  outcome.catch(() => {}); // settled by the run; a run that fails before is not news
  return outcome;
}

/** The step on the repeated appends: two messages, each kept under its acknowledged id. */
export async function repeatedStep(
  t: Deno.TestContext,
  outcome: PromiseSettledResult<Repeated>,
): Promise<void> {
  await t.step("two identical appends are two messages, kept through a kill right after", () => {
    if (outcome.status === "rejected") throw outcome.reason;
    const { problems, pattern } = outcome.value;
    diagnosed(pattern, () => ok(problems.length === 0, problems.join("; ")));
  });
}
