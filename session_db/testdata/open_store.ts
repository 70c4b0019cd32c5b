// Child for tests that depend on the process environment (read once per process):
// opens each `<db>` with no options, then prints one JSON object:
// `{ envMode, results: [{ path, journalMode, reason } | { path, error, message }] }`.
//
// Usage: deno run <perms> open_store.ts <db>...
import { journalModeFromEnv, SessionDB } from "../mod.ts";

type Result =
  | { path: string; journalMode: string; reason: string }
  | { path: string; error: string; message: string };

const results: Result[] = [];
for (const path of Deno.args) {
  try {
    const db = SessionDB.open(path);
    results.push({ path, journalMode: db.journalMode, reason: db.journalModeReason });
    db.close();
  } catch (error) {
    results.push({
      path,
      error: error instanceof Error ? error.name : "unknown",
      message: error instanceof Error ? error.message : String(error),
    });
  }
}
console.log(JSON.stringify({ envMode: journalModeFromEnv() ?? null, results }));
