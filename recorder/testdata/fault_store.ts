// A child for fault_itest.ts: the reference store under an injected fault. Appends "m0"
// and acknowledges it (the first mark: the recorder's fault count starts), tries "m1",
// marks again (the count stops), then tries "m2", and prints as JSON each attempt's
// outcome (the message id, or the error's name, message and SQLite code), with the
// journal mode the store chose (it falls back from WAL on an SQLite whose WAL can reset).
//   <db> <journal mode> <marks>
import { SessionDB } from "../../session_db/mod.ts";
import type { JournalMode } from "../../session_db/journal_mode.ts";

const [path, mode, marks] = Deno.args;
const db = SessionDB.open(path!, { journalMode: mode as JournalMode });
const chosen = db.journalMode;
db.createSession("s1");
const journal = Deno.openSync(marks!, { create: true, append: true });
const mark = (line: string) => journal.writeSync(new TextEncoder().encode(`${line}\n`));
const outcomes: unknown[] = [];
const attempt = (content: string): void => {
  try {
    outcomes.push(db.appendMessage("s1", { role: "user", content }));
  } catch (error) {
    const e = error as Error & { cause?: { code?: number } };
    outcomes.push({ error: e.name, message: e.message, code: e.cause?.code ?? null });
  }
};
attempt("m0");
mark("m0");
attempt("m1");
mark("after");
attempt("m2");
db.close();
journal.close();
console.log(JSON.stringify({ mode: chosen, outcomes }));
