// Cell 10's child: on one session, cycles append, end, end again, an append while ended,
// reopen; journals each end and reopen when invoked and every answer; may kill itself
// right after the n-th call of one kind.
import { AckWriter } from "../../../harness/ack_journal.ts";
import { killSelf } from "../../../harness/self_kill.ts";
import { childArgs, lifetimeGuard, marked, openStoreFor } from "../../contract/child_runtime.ts";
import { answerOf } from "../../contract/typed.ts";
import { AGAIN, BYSTANDERS, CYCLED, type CycleEntry, KEPT } from "../cycles.ts";

const [target, dbPath, journalPath, mark, killAt] = childArgs(
  4,
  "cycler.ts <target> <db> <journal> <mark: end|reopen|-> [kill itself right after: end@n|reopen@n|append@n|start@1]",
);
const [killOp, killN] = (killAt ?? "-@0").split("@") as [string, string];
const store = await openStoreFor(target!, dbPath!);
await store.createSession(CYCLED);
// Beside it, one session open and one ended, which no end or reopen of it may touch.
await store.createSession(BYSTANDERS.open);
await store.createSession(BYSTANDERS.ended);
await answerOf(() => store.endSession!(BYSTANDERS.ended, KEPT));
const journal = new AckWriter(journalPath!);
const calls = new Map<string, number>();
/** Journals an entry; once its call is the one to die after, dies. */
function note(entry: CycleEntry): void {
  journal.write(entry);
  if (entry.op === "inv") return;
  const n = (calls.get(entry.op) ?? 0) + 1;
  calls.set(entry.op, n);
  if (entry.op === killOp && n === Number(killN)) killSelf();
}
/** Runs a call, bracketed with marks when it is the kind the kill series walks. */
const call = (what: string, run: () => unknown) =>
  answerOf(() => what === mark ? marked(`${what}Session`, async () => await run()) : run());

// A life begins open: a session its last life left ended is reopened first.
note({ op: "inv", what: "reopen" });
note({ op: "start", answer: await answerOf(() => store.reopenSession!(CYCLED)) });
const guard = lifetimeGuard();
for (let i = 1;; i++) {
  guard();
  const content = `${Deno.pid}:${i}`;
  const message = (text: string) => ({ role: "user" as const, content: text });
  note({
    op: "append",
    content,
    answer: await answerOf(() => store.appendMessage(CYCLED, message(content))),
  });
  const reason = `r-${Deno.pid}-${i}`;
  note({ op: "inv", what: "end" });
  note({ op: "end", reason, answer: await call("end", () => store.endSession!(CYCLED, reason)) });
  note({ op: "end-again", answer: await answerOf(() => store.endSession!(CYCLED, AGAIN)) });
  const refused = `${content}:refused`;
  note({
    op: "refused",
    content: refused,
    answer: await answerOf(() => store.appendMessage(CYCLED, message(refused))),
  });
  note({ op: "inv", what: "reopen" });
  note({ op: "reopen", answer: await call("reopen", () => store.reopenSession!(CYCLED)) });
}
