// Cell 9's long session: a session longer than a store's default page, read back whole.
// A store whose reads answer one page (a LIMIT it sets, one page of a paginated query)
// loses every message past it from every resumed session that long, and passes every check
// of sessions shorter than its page.
import { ok } from "node:assert/strict";
import { readAckJournal } from "../../harness/ack_journal.ts";
import { classifyExit, reapAll } from "../../harness/child.ts";
import { waitFor } from "../../harness/wait_for.ts";
import type { CellRun } from "../engine/cell.ts";
import { diagnosed } from "../engine/diagnoses.ts";
import { tally } from "../engine/tally.ts";
import { openTargetStore, type StoredMessage } from "../contract/target.ts";
import { shownValue } from "../contract/typed.ts";
import {
  LONG_BATCH,
  LONG_MESSAGES,
  LONG_SESSION,
  type LongAck,
  longText,
} from "../moves/_long_session.ts";
import { LONG_WRITER } from "./_children.ts";

/** What a read of the long session breaks, and whether it is a page of it. */
export interface LongSessionJudgement {
  /** One line per problem (none: the session read back whole). */
  problems: string[];
  /** Whether what was read is the session's first or last messages alone (a page). */
  page: boolean;
}

/**
 * Judges a read of the long session against its acknowledged batches: every acknowledged
 * message, in order, with its text, and nothing else.
 *
 * @param acks The acknowledged batches, in order.
 * @param rows What `getMessages` answered.
 * @returns The problems.
 */
export function judgeLongSession(
  acks: readonly LongAck[],
  rows: readonly Pick<StoredMessage, "id" | "content">[],
): LongSessionJudgement {
  const expected = acks.flatMap((ack) =>
    ack.ids.map((id, j) => ({ id, content: longText(ack.b * LONG_BATCH + j) }))
  );
  const same = (a: Pick<StoredMessage, "id" | "content">, b: { id: number; content: string }) =>
    a.id === b.id && a.content === b.content;
  const read =
    `getMessages("${LONG_SESSION}") answered ${rows.length} of the session's ${expected.length} acknowledged messages`;
  if (rows.length < expected.length && rows.length > 0) {
    if (rows.every((row, i) => same(row, expected[i]!))) {
      const after = expected[rows.length]!.id;
      return {
        problems: [`${read}: the first ${rows.length}, none from id ${after} on`],
        page: true,
      };
    }
    const skipped = expected.length - rows.length;
    if (rows.every((row, i) => same(row, expected[skipped + i]!))) {
      const before = expected[skipped]!.id;
      return {
        problems: [`${read}: the last ${rows.length}, none before id ${before}`],
        page: true,
      };
    }
  }
  const problems: string[] = [];
  const readIds = new Set(rows.map((row) => row.id));
  const missing = expected.filter((m) => !readIds.has(m.id));
  if (missing.length) {
    problems.push(`${read}: ${missing.length} missing, first: id ${missing[0]!.id}`);
  }
  const acknowledged = new Map(expected.map((m) => [m.id, m.content]));
  const stray = rows.filter((row) => !acknowledged.has(row.id));
  if (stray.length) {
    problems.push(
      `${stray.length} message(s) read that no batch acknowledged, first: ${shownValue(stray[0])}`,
    );
  }
  const changed = rows.filter((row) =>
    acknowledged.has(row.id) && acknowledged.get(row.id) !== row.content
  );
  if (changed.length) {
    const first = changed[0]!;
    problems.push(
      `${changed.length} text(s) changed, first: id ${first.id} (${
        shownValue(acknowledged.get(first.id))
      }) read back as ${shownValue(first.content)}`,
    );
  }
  const backwards = rows.findIndex((row, i) => i > 0 && row.id <= rows[i - 1]!.id);
  if (backwards > 0) {
    problems.push(
      `read out of id order: id ${rows[backwards]!.id} after ${rows[backwards - 1]!.id}`,
    );
  }
  return { problems, page: false };
}

/**
 * The long session: a writer appends its messages in batches to one session of a fresh
 * file and kills itself right after the last is acknowledged; a fresh read must answer
 * every one of them, in order.
 *
 * @param ctx The cell's run.
 * @param t The cell's test context.
 */
export async function longSession(ctx: CellRun, t: Deno.TestContext): Promise<void> {
  const db = ctx.run.store("long");
  const journal = ctx.run.file("journal-long.jsonl");
  const batches = LONG_MESSAGES / LONG_BATCH;
  const acked = () => readAckJournal<LongAck>(journal).length;
  const child = ctx.spawn(LONG_WRITER, [db, journal]);
  try {
    await waitFor(() => child.exited !== undefined, {
      what: `the long session's ${batches} acknowledged batches and the writer's self-kill`,
      deadlineMs: 60_000,
      children: [child],
      observed: () => `${acked()} batches acknowledged`,
      progress: ctx.progress(acked),
    });
  } finally {
    await reapAll([child]);
  }
  const acks = readAckJournal<LongAck>(journal);
  await t.step(`long session: the writer acknowledged its ${batches} batches`, () => {
    ok(
      acks.length === batches && classifyExit(child.exited!).kind === "killed",
      `${acks.length} acknowledged: ${child.describe()}`,
    );
  });
  tally(ctx, "sigkills", 1);
  tally(ctx, "acknowledgedOps", acks.length);
  ctx.observeLeg(db, "long session", true);
  const store = await openTargetStore(ctx.target, db);
  let rows: StoredMessage[];
  try {
    rows = await store.getMessages(LONG_SESSION);
  } finally {
    await store.close();
  }
  const judged = judgeLongSession(acks, rows);
  await t.step(
    `long session: every one of its ${LONG_MESSAGES} acknowledged messages read back, in order`,
    () =>
      diagnosed(
        judged.page && "read-cut",
        () => ok(judged.problems.length === 0, judged.problems.join("; ")),
      ),
  );
}
