// The long fork's judge: a branch holding the session's messages up to its fork point
// passes; a first page alone, a changed or reordered message, or a message past the fork
// is named.
import { ok, strictEqual } from "node:assert/strict";
import { longBranchProblem } from "./long_fork.ts";
import { longText } from "../moves/_long_session.ts";

const branch = (n: number) => Array.from({ length: n }, (_, i) => ({ content: longText(i) }));

Deno.test("longBranchProblem: the messages up to the fork, in order, pass", () => {
  strictEqual(longBranchProblem(branch(41), 40), undefined);
});

Deno.test("longBranchProblem: a first page, a changed message, one past the fork are named", () => {
  strictEqual(
    longBranchProblem(branch(10), 40),
    "the branch holds 10 messages, not the 41 up to the fork (its first 10 alone)",
  );
  const swapped = branch(41);
  [swapped[3], swapped[4]] = [swapped[4]!, swapped[3]!];
  strictEqual(longBranchProblem(swapped, 40), 'message 3 of the branch is "long 4", not "long 3"');
  ok(longBranchProblem(branch(42), 40)?.startsWith("the branch holds 42 messages, not the 41"));
});
