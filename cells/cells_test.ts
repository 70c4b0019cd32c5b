// The cells against the reference store, on the leg of this process
// (SESSION_DB_JOURNAL_MODE and DENO_SQLITE_PATH).
import { concurrentWritersCell } from "./concurrent_writers.ts";
import { outboxExactlyOnceCell } from "./outbox_exactly_once.ts";
import { registerCells } from "./register.ts";

const target = new URL("./reference_target.ts", import.meta.url);
await registerCells({ target, cells: [1, 2, 3, 4, 7] });
// Cell 5 with one transport per kill point (the matrix and the mutants task run both).
for (const test of await outboxExactlyOnceCell({ target, transports: "one" })) {
  Deno.test(test);
}
// At this load the reference store never refuses a write (its busy deadline is 60 s).
// Twice the default work, so that its kills land mid-work on a quick library too.
for (const test of await concurrentWritersCell({ target, maxRefusals: 0, span: 2 })) {
  Deno.test(test);
}
