// Clause 1's judge on transcripts made by hand: the writer's texts, a refused text skipped in
// the prefix (typed: declined; untyped: a failure of the text check alone), a text read back
// changed, a message in another role, a lost acknowledged append.
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import type { StoredMessage } from "../contract/target.ts";
import { textDifference } from "../engine/_texts.ts";
import { prefixContent, prefixKind, prefixName, prefixRole, resumeIndex } from "./_content.ts";
import { type Append, judgeRecovered } from "./judge.ts";

/** The checks that failed, by name, with their problems. */
function failed(messages: StoredMessage[], acks: Append[]): Record<string, string[]> {
  const judged = judgeRecovered(
    { first: { messages, invariants: [] }, second: { messages } },
    acks,
  );
  return Object.fromEntries(
    judged.checks
      .filter((check) => check.violations.length + check.missing.length > 0)
      .map((check) => [check.name, [...check.violations, ...check.missing]]),
  );
}

const row = (i: number, content = prefixContent(i)) => ({
  id: i + 1,
  role: prefixRole(i),
  content,
});
const acked = (i: number): Append => ({ i, rowid: i + 1 });

Deno.test("the writer's texts: m<i> first, then what a store must keep as written", () => {
  strictEqual(prefixContent(0), "m0");
  ok(prefixContent(5).includes("\0"), JSON.stringify(prefixContent(5)));
  ok(prefixContent(7).length > 65_536, `${prefixContent(7).length}`);
  ok(/🦕/.test(prefixContent(1)) && prefixContent(3).includes("\n"));
  strictEqual(prefixKind(5), "an embedded NUL");
  for (const i of [0, 1, 3, 5, 6, 7, 39]) strictEqual(prefixName(prefixContent(i)), `m${i}`);
  strictEqual(resumeIndex([]), 0);
  // After the last recovered message, whichever texts before it were refused.
  strictEqual(resumeIndex([row(0), row(1), row(6)]), 7);
  strictEqual(
    textDifference("m5", "m5\0after"),
    'read back as 2 characters where 8 were written, different from character 2: "m5" for "m5\\u0000after"',
  );
  strictEqual(textDifference(null, "m0"), "read back as null");
});

Deno.test("judgeRecovered: every kind of text kept, all checks hold", () => {
  const rows = Array.from({ length: 40 }, (_, i) => row(i));
  deepStrictEqual(failed(rows, rows.map((_, i) => acked(i))), {});
});

Deno.test("judgeRecovered: a refused text is left out of the prefix; untyped, it fails the text check", () => {
  const rows = [row(0), row(1), row(2), row(3), row(4), row(6)];
  const acks = [0, 1, 2, 3, 4, 6].map(acked);
  const typed: Append = { i: 5, refused: "TextRefusedError: no NUL", typed: true };
  deepStrictEqual(failed(rows, [...acks, typed]), {});
  const untyped: Append = { i: 5, refused: "Error: invalid byte sequence", typed: false };
  deepStrictEqual(failed(rows, [...acks, untyped]), {
    "every text kept as written (UTF-8, line breaks, a NUL, 72 KiB)": [
      "1 text(s) refused with an untyped error, first: m5 (an embedded NUL) refused untyped: Error: invalid byte sequence",
    ],
  });
  // A text the writer did not journal as refused is a gap.
  ok(Object.keys(failed(rows, acks)).some((name) => name.startsWith("contiguous prefix")));
});

Deno.test("judgeRecovered: a text read back cut is changed, not lost", () => {
  const rows = [row(0), row(1), row(2), row(3), row(4), row(5, "m5")];
  const problems = failed(rows, rows.map((_, i) => acked(i)));
  deepStrictEqual(Object.keys(problems), [
    "every text kept as written (UTF-8, line breaks, a NUL, 72 KiB)",
  ]);
  ok(
    problems[Object.keys(problems)[0]!]![0]!.startsWith(
      "1 message(s) changed, first: m5 (an embedded NUL) read back as 2 characters",
    ),
  );
});

Deno.test("judgeRecovered: a message read back in another role is changed, not lost", () => {
  deepStrictEqual([0, 1, 2, 3, 4].map(prefixRole), ["user", "assistant", "tool", "system", "user"]);
  const rows = [row(0), row(1), { ...row(2), role: "assistant" }, { ...row(3), role: "user" }];
  deepStrictEqual(failed(rows, rows.map((_, i) => acked(i))), {
    "every role kept as written (system, user, assistant, tool)": [
      '2 message(s) in another role, first: m2 read back as "assistant", written as "tool"',
    ],
  });
});

Deno.test("judgeRecovered: a tool turn refused typed is left out; untyped, it fails the text check", () => {
  const rows = [row(0), row(1), row(3), row(4)];
  const acks = [0, 1, 3, 4].map(acked);
  const typed: Append = { i: 2, refused: "ToolCallMissingError: names no call", typed: true };
  deepStrictEqual(failed(rows, [...acks, typed]), {});
  const untyped: Append = { i: 2, refused: "Error: tool_call_id required", typed: false };
  deepStrictEqual(failed(rows, [...acks, untyped]), {
    "every text kept as written (UTF-8, line breaks, a NUL, 72 KiB)": [
      "1 text(s) refused with an untyped error, first: m2 (nothing more, role tool) refused untyped: Error: tool_call_id required",
    ],
  });
});

Deno.test("judgeRecovered: an acknowledged append missing is lost", () => {
  const problems = failed([row(0), row(1)], [acked(0), acked(1), acked(2)]);
  ok(
    problems["nothing acknowledged lost: 3 acknowledged"]?.[0]?.startsWith(
      "1 acknowledged append(s) lost",
    ),
  );
  deepStrictEqual(problems["contiguous prefix m0..m1, N >= acknowledged"], [
    "2 recovered < 3 acknowledged",
  ]);
});
