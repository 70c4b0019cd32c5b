// The cells against the reference store, on the leg of this process
// (SESSION_DB_JOURNAL_MODE and DENO_SQLITE_PATH).
import { registerCells } from "./register.ts";

await registerCells({ target: new URL("./reference_target.ts", import.meta.url) });
