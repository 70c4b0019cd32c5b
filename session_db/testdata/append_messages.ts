// Child for the crash-point tests: opens `<db>` (journal mode and crash point from the
// environment), ensures session `<session>` and appends `<count>` messages m0..m(n-1),
// printing one JSON line per acknowledged append.
//
// Usage: deno run <perms> append_messages.ts <db> <count> [session]
import { SessionDB } from "../mod.ts";

const [path, countText, session = "s"] = Deno.args;
const count = Number(countText);
if (!path || !Number.isSafeInteger(count)) {
  console.error("usage: append_messages.ts <db> <count> [session]");
  Deno.exit(2);
}

try {
  const db = SessionDB.open(path);
  db.ensureSession(session);
  for (let i = 0; i < count; i++) {
    const id = db.appendMessage(session, { role: i % 2 ? "assistant" : "user", content: `m${i}` });
    console.log(JSON.stringify({ i, id }));
  }
  db.close();
} catch (error) {
  console.error(error instanceof Error ? `${error.name}: ${error.message}` : String(error));
  Deno.exit(1);
}
