// The long session's judge: read whole passes; its first or last messages alone are a page
// (`read-cut`); a gap, a stray message, a changed text and a reorder are named otherwise.
import { deepStrictEqual, ok } from "node:assert/strict";
import { judgeLongSession } from "./long_session.ts";
import { LONG_BATCH, type LongAck, longText } from "../moves/_long_session.ts";

/** Acknowledged batches of ids from 101 on (a store's ids need not start at 1). */
const acks: LongAck[] = Array.from({ length: 5 }, (_, b) => ({
  b,
  ids: Array.from({ length: LONG_BATCH }, (_, j) => 101 + b * LONG_BATCH + j),
}));
const whole = acks.flatMap((a) =>
  a.ids.map((id, j) => ({ id, content: longText(a.b * LONG_BATCH + j) }))
);

Deno.test("judgeLongSession: the whole session, in order, has no problem", () => {
  deepStrictEqual(judgeLongSession(acks, whole), { problems: [], page: false });
});

Deno.test("judgeLongSession: the first or the last messages alone are a page", () => {
  const first = judgeLongSession(acks, whole.slice(0, 40));
  deepStrictEqual(first, {
    problems: [
      'getMessages("long") answered 40 of the session\'s 100 acknowledged messages: the first 40, none from id 141 on',
    ],
    page: true,
  });
  const last = judgeLongSession(acks, whole.slice(60));
  ok(last.page);
  ok(last.problems[0]!.endsWith("the last 40, none before id 161"), last.problems[0]);
});

Deno.test("judgeLongSession: a gap, a stray, a changed text and a reorder are named, none a page", () => {
  const gap = judgeLongSession(acks, [...whole.slice(0, 10), ...whole.slice(12)]);
  deepStrictEqual(gap.page, false);
  ok(
    gap.problems[0]!.endsWith(
      "98 of the session's 100 acknowledged messages: 2 missing, first: id 111",
    ),
  );
  const stray = judgeLongSession(acks, [...whole, { id: 999, content: "other" }]);
  ok(
    stray.problems[0]!.startsWith("1 message(s) read that no batch acknowledged"),
    stray.problems[0],
  );
  const changed = judgeLongSession(acks, whole.map((m, i) => i === 3 ? { ...m, content: "x" } : m));
  ok(
    changed.problems[0]!.startsWith('1 text(s) changed, first: id 104 ("long 3")'),
    changed.problems[0],
  );
  const swapped = [...whole];
  [swapped[5], swapped[6]] = [swapped[6]!, swapped[5]!];
  const reordered = judgeLongSession(acks, swapped);
  deepStrictEqual(reordered.problems, ["read out of id order: id 106 after 107"]);
});
