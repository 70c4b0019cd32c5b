// The judge of two identical writes, on answers and records made by hand.
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { judgeRepeated } from "./repeated.ts";

const yes = (id: number | string) => ({ id, same: true, shown: id });

Deno.test("judgeRepeated: two acknowledged identical writes, both kept under their ids", () => {
  deepStrictEqual(judgeRepeated([4, 5], [yes(4), yes(5)]), { problems: [] });
  deepStrictEqual(judgeRepeated(["o-1", "o-2"], [yes("o-2"), yes("o-1")]), { problems: [] });
});

Deno.test("judgeRepeated: the second refused with an error of the store's own, the first alone", () => {
  deepStrictEqual(judgeRepeated([4, { refused: "DuplicateTurnError" }], [yes(4)]), {
    problems: [],
  });
});

Deno.test("judgeRepeated: the second answered the first's id is merged", () => {
  const { problems, pattern } = judgeRepeated([4, 4], [yes(4)]);
  strictEqual(pattern, "identical-write-merged");
  ok(problems[0]!.startsWith("the second of two identical writes was answered the first's id 4"));
});

Deno.test("judgeRepeated: an acknowledged write missing is lost; one changed is reported", () => {
  strictEqual(judgeRepeated([4, 5], [yes(4)]).pattern, "ack-before-commit");
  const changed = judgeRepeated([4, 5], [yes(4), { ...yes(5), same: false }]);
  strictEqual(changed.problems.length, 1);
  strictEqual(changed.pattern, undefined);
});
