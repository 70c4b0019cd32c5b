// Cell 4's long fork: a branch of a session longer than a store's default page. A store
// that forks through a paged read of its own (a LIMIT, one page of a paginated query)
// copies the first page alone, and passes every fork of a short session.
import { ok } from "node:assert/strict";
import type { CellRun } from "../engine/cell.ts";
import { withStore } from "../contract/with_store.ts";
import type { StoredMessage } from "../contract/target.ts";
import { shownValue } from "../contract/typed.ts";
import { LONG_BATCH, LONG_MESSAGES, longBatch, longText } from "../moves/_long_session.ts";

/** The long session, and its branches: at its last message and at its middle. */
const SESSION = "long";
const BRANCHES = [
  { id: "long-at-end", at: LONG_MESSAGES - 1 },
  { id: "long-at-middle", at: LONG_MESSAGES / 2 },
];

/**
 * How a branch read back differs from the first `through + 1` messages of the long session
 * (its texts in order), or `undefined` when it holds exactly them.
 *
 * @param rows The branch's messages.
 * @param through The index of the message the branch was forked at.
 * @returns The difference.
 */
export function longBranchProblem(
  rows: readonly Pick<StoredMessage, "content">[],
  through: number,
): string | undefined {
  const expected = through + 1;
  const wrong = rows.findIndex((row, i) => row.content !== longText(i));
  if (wrong >= 0 && wrong < expected) {
    return `message ${wrong} of the branch is ${shownValue(rows[wrong]!.content)}, not ${
      shownValue(longText(wrong))
    }`;
  }
  if (rows.length !== expected) {
    const page = rows.length < expected ? ` (its first ${rows.length} alone)` : "";
    return `the branch holds ${rows.length} messages, not the ${expected} up to the fork${page}`;
  }
  return undefined;
}

/**
 * The long fork, where the store has `appendMessages`: the long session set up from this
 * process, forked at its last message and at its middle; a fresh open must read each branch
 * as the session's messages up to its fork point, in order.
 *
 * @param ctx The cell's run.
 * @param t The cell's test context.
 */
export async function longFork(ctx: CellRun, t: Deno.TestContext): Promise<void> {
  const db = ctx.run.store("long");
  const ids = await withStore(ctx.target, db, async (store) => {
    if (!store.appendMessages) return undefined;
    await store.createSession(SESSION);
    const ids: number[] = [];
    for (let b = 0; b < LONG_MESSAGES / LONG_BATCH; b++) {
      ids.push(...await store.appendMessages(SESSION, longBatch(b)));
    }
    for (const branch of BRANCHES) await store.forkSession!(SESSION, ids[branch.at]!, branch.id);
    return ids;
  });
  if (!ids) {
    ctx.note("longFork", "not run: the store has no appendMessages to build the long session");
    return;
  }
  const read = await withStore(
    ctx.target,
    db,
    async (store) =>
      await Promise.all(BRANCHES.map(async (branch) => await store.getMessages(branch.id))),
  );
  await t.step(
    `long fork: a branch of a ${LONG_MESSAGES}-message session holds every message up to its fork`,
    () => {
      const problems = BRANCHES.flatMap((branch, i) => {
        const problem = longBranchProblem(read[i]!, branch.at);
        return problem ? [`${branch.id} (forked at message ${branch.at}): ${problem}`] : [];
      });
      ok(problems.length === 0, problems.join("; "));
    },
  );
}
