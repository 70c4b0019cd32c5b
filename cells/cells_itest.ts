// The cells against the reference store, on the leg of this process
// (SESSION_DB_JOURNAL_MODE and DENO_SQLITE_PATH). A lighter load than the defaults, so
// that `deno test -A` stays quick: shorter prefixes before each kill, fewer racers, two
// cells at a time. Every check still runs; `deno task matrix` (run by CI on every leg)
// runs the defaults, one cell at a time, each under its own narrowed permissions.
import { prefetched } from "./engine/prefetch.ts";
import { CELLS } from "./register.ts";

const target = new URL("./reference_target.ts", import.meta.url);
const lighter = {
  1: { minAcknowledged: 50 },
  2: { claimants: 4 },
  3: { minAcknowledged: 20 },
  4: {},
  // One transport per kill point (the matrix and the mutants task run both).
  5: { transports: "one" },
  // At this load the reference store never refuses a write (its busy deadline is 60 s).
  // Twice the default work, so that its kills land mid-work on a quick library too; a
  // shorter busy window (every role still meets it).
  6: { maxRefusals: 0, span: 2, busyWindowMs: 500 },
  7: {},
} as const;

const definitions: Deno.TestDefinition[] = [];
// Cells 8 to 13 run from their own folders' cell_itest.ts.
for (const id of [1, 2, 3, 4, 5, 6, 7] as const) {
  definitions.push(...await CELLS[id]({ target, ...lighter[id] }));
}
// The reference store keeping the origin's delivery policy (marked-at-least-once) passes
// cell 5 under it too.
definitions.push(
  ...await CELLS[5]({
    target: new URL("./testdata/marked_target.ts", import.meta.url),
    label: "reference, marked-at-least-once",
    ...lighter[5],
  }),
);
// A store that prints to stdout (before and after what a child reports there) is judged as
// the reference: the cells whose children report on stdout pass it.
for (const id of [5, 8] as const) {
  definitions.push(
    ...await CELLS[id]({
      target: new URL("./testdata/chatty_target.ts", import.meta.url),
      label: "reference, printing to stdout",
      ...(id === 5 ? lighter[5] : {}),
    }),
  );
}
// A store that keeps its process alive after its work (a timer it never clears): the
// children end when their script does, and the cell judges it as the reference.
definitions.push(
  ...await CELLS[8]({
    target: new URL("./testdata/lingering_timer_target.ts", import.meta.url),
    label: "reference, a timer never cleared",
  }),
);
for (const test of prefetched(definitions, 2)) Deno.test(test);
