// Cell 1's judge of two identical appends, on answers and rows made by hand.
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { judgeRepeated } from "./repeated.ts";

const yes = (id: number) => ({ id, role: "user", content: "yes" });

Deno.test("judgeRepeated: two acknowledged identical appends, both kept under their ids", () => {
  deepStrictEqual(judgeRepeated([4, 5], [yes(4), yes(5)]), { problems: [] });
});

Deno.test("judgeRepeated: the second refused with an error of the store's own, the first alone", () => {
  deepStrictEqual(judgeRepeated([4, { refused: "DuplicateTurnError" }], [yes(4)]), {
    problems: [],
  });
});

Deno.test("judgeRepeated: the second answered the first's id is merged", () => {
  const { problems, pattern } = judgeRepeated([4, 4], [yes(4)]);
  strictEqual(pattern, "identical-append-merged");
  ok(problems[0]!.startsWith("the second of two identical appends was answered the first's id 4"));
});

Deno.test("judgeRepeated: an acknowledged append missing is lost; one in another role is changed", () => {
  strictEqual(judgeRepeated([4, 5], [yes(4)]).pattern, "ack-before-commit");
  const recast = judgeRepeated([4, 5], [yes(4), { ...yes(5), role: "assistant" }]);
  strictEqual(recast.problems.length, 1);
  strictEqual(recast.pattern, undefined);
});
