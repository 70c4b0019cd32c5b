// The probe's check of a store's first appends: ids, increasing; getMessages' rows with ids.
import { ok, strictEqual } from "node:assert/strict";
import { firstAppendsProblem } from "./_first_appends.ts";

const rows = (...ids: unknown[]) => ids.map((id) => ({ id, role: "user", content: "x" }));

Deno.test("firstAppendsProblem: ids increasing from anywhere keep the contract", () => {
  strictEqual(firstAppendsProblem("s", [1, 2, 3], rows(1, 2, 3)), undefined);
  strictEqual(firstAppendsProblem("s", [0, 1, 2], rows(0, 1, 2)), undefined);
  strictEqual(firstAppendsProblem("s", [7, 40, 41], rows(5, 7, 40, 41)), undefined);
  // A store that applies its writes later is judged by the cells, never by a race here.
  strictEqual(firstAppendsProblem("s", [1, 2, 3], rows(1)), undefined);
  strictEqual(firstAppendsProblem("s", [1, 2, 3], []), undefined);
});

Deno.test("firstAppendsProblem: a row, nothing, a repeat or an unlisted id is named", () => {
  const problem = (ids: unknown[], listed: unknown) => firstAppendsProblem("s", ids, listed) ?? "";
  ok(problem([{ id: 1 }], rows(1)).startsWith('appendMessage answered {"id":1}, not'));
  ok(problem([undefined], rows(1)).startsWith("appendMessage answered undefined, not"));
  ok(problem([2, 2], rows(2)).startsWith("appendMessage answered ids 2, 2 for appends in a row"));
  ok(problem([1], { messages: rows(1) }).startsWith('getMessages("s") answered {"messages"'));
  ok(
    problem([1], [{ messageId: 1 }]).startsWith('getMessages("s") answered {"messageId":1} among'),
  );
  ok(problem([1], rows("m-1")).startsWith('getMessages("s") answered {"id":"m-1",'));
});

Deno.test("firstAppendsProblem: an id past the safe integers is named as such, with the way out", () => {
  const problem = (ids: unknown[], listed: unknown) => firstAppendsProblem("s", ids, listed) ?? "";
  const snowflake = 1_800_000_000_000_000_001n;
  ok(
    problem([snowflake], rows(1)).startsWith(
      "appendMessage answered 1800000000000000001, an integer past 2^53 - 1",
    ),
  );
  ok(problem(["1800000000000000001"], rows(1)).includes("an integer past 2^53 - 1"));
  ok(problem([2 ** 60], rows(1)).includes("minus a fixed base"));
  ok(
    problem([1], rows(snowflake)).startsWith(
      'getMessages("s") answered a message id 1800000000000000001, an integer past',
    ),
  );
  // Not integers at all: the contract's general message.
  ok(problem([1.5], rows(1)).startsWith("appendMessage answered 1.5, not the new message's id"));
  ok(problem(["0042"], rows(1)).includes("not the new message's id"));
});
