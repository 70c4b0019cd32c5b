// Cell 10's judge on hand-made journals and states: no processes, no store.
import { deepStrictEqual, ok } from "node:assert/strict";
import type { CycleEntry } from "./cycles.ts";
import { type CycledState, expectedState, judgeCycled } from "./judge.ts";

const yes = { threw: false, value: true };
const no = { threw: false, value: false };
const ended = { threw: true, name: "SessionEndedError", message: "ended" };

/** One full cycle of a correct store, ids from `id`. */
function cycle(i: number, id: number): CycleEntry[] {
  return [
    { op: "append", content: `p:${i}`, answer: { threw: false, value: id } },
    { op: "inv", what: "end" },
    { op: "end", reason: `r${i}`, answer: yes },
    { op: "end-again", answer: no },
    { op: "refused", content: `p:${i}:refused`, answer: ended },
    { op: "inv", what: "reopen" },
    { op: "reopen", answer: yes },
  ];
}

function state(over: Partial<CycledState>): CycledState {
  return {
    rows: [{ id: 1, content: "p:1" }],
    session: { endedAt: null, endReason: null },
    probe: { threw: false, value: 9 },
    soundness: [],
    bystanders: { open: { threw: false, value: 3 }, ended, endedReason: "kept" },
    ...over,
  };
}

function failing(journal: CycleEntry[], s: CycledState): string[] {
  return judgeCycled(journal, s).checks
    .filter((c) => c.violations.length || c.missing.length)
    .map((c) => `${c.name}: ${[...c.violations, ...c.missing].join("; ")}`);
}

Deno.test("expected state: after an acknowledged end, reopen, or one in flight", () => {
  const journal = cycle(1, 1);
  deepStrictEqual(expectedState(journal), { state: "open" });
  deepStrictEqual(expectedState(journal.slice(0, 3)), { state: "ended", reason: "r1" });
  deepStrictEqual(expectedState(journal.slice(0, 2)), { state: "either" });
  deepStrictEqual(expectedState(journal.slice(0, 6)), { state: "either" });
});

Deno.test("judge: a correct open state and a correct ended one pass", () => {
  deepStrictEqual(failing(cycle(1, 1), state({})), []);
  const endedState = state({
    session: { endedAt: 5, endReason: "r1" },
    probe: ended,
  });
  deepStrictEqual(failing(cycle(1, 1).slice(0, 5), endedState), []);
});

Deno.test("judge: a lost end, a half state, a second reason, a refused append that landed", () => {
  const journal = cycle(1, 1).slice(0, 5);
  const lost = failing(journal, state({}));
  ok(
    lost[0]?.startsWith(
      "an acknowledged end or reopen survives: expected ended: the session is open",
    ),
  );
  const half = failing(cycle(1, 1), state({ probe: ended }));
  ok(
    half.some((f) => f.includes("getSession says open")),
    half.join("\n"),
  );
  const again = failing(
    journal,
    state({ session: { endedAt: 5, endReason: "again" }, probe: ended }),
  );
  ok(again.some((f) => f.startsWith('the first reason stays: endReason is "again"')));
  const landed = failing(
    cycle(1, 1),
    state({ rows: [{ id: 1, content: "p:1" }, { id: 2, content: "p:1:refused" }] }),
  );
  ok(
    landed.some((f) => f.includes("the refused append p:1:refused left row 2")),
    landed.join("\n"),
  );
});

Deno.test("judge: a reopen of an open session returning true, a bystander touched", () => {
  const journal: CycleEntry[] = [{ op: "inv", what: "reopen" }, { op: "start", answer: yes }];
  const found = failing(journal, state({ rows: [] }));
  ok(found[0]?.includes("reopenSession of the open session returned true, not false"), found[0]);
  const touched = failing(cycle(1, 1), state({ bystanders: { open: ended, ended: yes } }));
  ok(
    touched.some((f) => f.includes("an append to the open session beside it threw")),
    touched.join("\n"),
  );
  ok(touched.some((f) => f.includes("an append to the ended session beside it returned true")));
});

Deno.test("judge: wrong answers are named once per kind", () => {
  const journal = cycle(1, 1).map((e): CycleEntry =>
    e.op === "refused" ? { ...e, answer: { threw: false, value: 2 } } : e
  );
  const found = failing(journal, state({}));
  ok(
    found[0]?.includes("an append to the ended session returned 2, not SessionEndedError"),
    found[0],
  );
  const untyped = failing(
    cycle(1, 1),
    state({ session: undefined, probe: { threw: true, name: "Error", message: "x" } }),
  );
  ok(untyped.some((f) => f.includes("(untyped)")), untyped.join("\n"));
});
