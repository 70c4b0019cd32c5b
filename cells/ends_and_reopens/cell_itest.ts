// Cell 10 against the reference store, on the leg of this process (SESSION_DB_JOURNAL_MODE
// and DENO_SQLITE_PATH).
import { endsAndReopensCell } from "./cell.ts";

const target = new URL("../reference_target.ts", import.meta.url);
for (const test of await endsAndReopensCell({ target })) Deno.test(test);
