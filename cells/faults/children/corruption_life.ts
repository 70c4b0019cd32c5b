// F2's child: one life of the store on one file. `write` creates the session and appends
// the planned messages, journaling each acknowledged append; `judge` opens the damaged
// copy, reads the session and tries appends, journaling every answer; `read` (the third
// life) opens and reads the session. Answers are journaled as they come, so that a child
// that dies midway still leaves what it saw.
import { AckWriter } from "../../../harness/ack_journal.ts";
import { childArgs, lifetimeGuard, openStoreFor } from "../../contract/child_runtime.ts";
import { type Answer, answerOf } from "../../contract/typed.ts";
import type { Store } from "../../contract/target.ts";

const [target, mode, dbPath, journalPath, sessionId, arg = "0"] = childArgs(
  5,
  "corruption_life.ts <target> <write|judge|read> <db> <journal> <session> [count or prefix]",
);
const journal = new AckWriter(journalPath!);
const guard = lifetimeGuard();

/** The text of planned message `i`: long enough that the messages span several pages. */
function messageText(i: number, salt: string): string {
  const pad = `${salt}-${i}-`.repeat(40);
  return `f2 m${String(i).padStart(3, "0")} ${pad}`;
}

function note(step: string, answer: Answer): void {
  journal.write({ step, ...answer });
}

if (mode === "write") {
  const store = await openStoreFor(target!, dbPath!, { busy: "thrown" });
  await store.createSession(sessionId!);
  const [count, salt] = arg.split(":");
  for (let i = 0; i < Number(count); i++) {
    guard();
    const content = messageText(i, salt ?? "s");
    const id = await store.appendMessage(sessionId!, { role: "user", content });
    journal.write({ step: "ack", i, id, content });
  }
  await store.close();
  journal.write({ step: "done" });
} else {
  let store: Store | undefined;
  const open = await answerOf(async () => {
    store = await openStoreFor(target!, dbPath!, { busy: "thrown" });
    return true;
  });
  note("open", open);
  if (store) {
    const opened: Store = store;
    note("read", await answerOf(() => opened.getMessages(sessionId!)));
    if (mode === "judge") {
      for (let k = 0; k < 2; k++) {
        guard();
        const content = `${arg}-after-${k}`;
        const answer = await answerOf(() =>
          opened.appendMessage(sessionId!, { role: "user", content })
        );
        journal.write({ step: "append", content, ...answer });
      }
    }
    note("close", await answerOf(() => opened.close()));
  }
  journal.write({ step: "done" });
}
