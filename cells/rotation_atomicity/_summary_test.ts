// The handoffs cell 3's rotator publishes: a summary, then none to two turns carried over.
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { handoffOf, plainSummary, summaryText } from "./_summary.ts";

Deno.test("handoffOf: a system summary, then i % 3 turns carried over in their roles", () => {
  deepStrictEqual(handoffOf(0), [{ role: "system", content: summaryText(0) }]);
  deepStrictEqual(handoffOf(5).map((m) => [m.role, m.content.split(/[ \0]/, 2).join(" ")]), [
    ["system", "summary 5"],
    ["user", "carried 5.1"],
    ["assistant", "carried 5.2"],
  ]);
  strictEqual(handoffOf(4).length, 2);
  // Refused with a typed error, the summary is published plain; the turns carried over stay.
  deepStrictEqual(handoffOf(5, true).map((m) => m.content), [
    plainSummary(5),
    "carried 5.1",
    "carried 5.2",
  ]);
});
