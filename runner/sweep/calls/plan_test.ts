// The recorded-call sweep's programs: the long run of appends that reaches a store's
// periodic work comes with the sequences of two, never with the quick ones.
import { deepStrictEqual, ok } from "node:assert/strict";
import { LONG_APPENDS, programsFor } from "./plan.ts";

const CORE = ["createSession", "appendMessage", "getMessages", "close"];
const joined = (programs: string[][]) => programs.map((p) => p.join("+"));

Deno.test("programsFor: twelve appends from a maxLength of two, for cell 1", () => {
  const long = LONG_APPENDS.join("+");
  deepStrictEqual(LONG_APPENDS.length, 12);
  ok(joined(programsFor(CORE, 2)).includes(long));
  ok(joined(programsFor(CORE, 2, [1])).includes(long));
  ok(!joined(programsFor(CORE, 1)).includes(long));
  ok(!joined(programsFor(CORE, 2, [13])).includes(long));
});
