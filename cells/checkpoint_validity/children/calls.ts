// Cell 13's one child: opens the store in a fresh process, makes the calls it is given in
// order, each bracketed by operation marks (for a kill series), and journals what each
// returned or threw (the open first), then closes the store and exits 0, or, given a ready
// file, waits there to be SIGKILLed with nothing after its last call. An argument
// `{ "$answer": i }` is what call i returned; `{ "$past": true }` is one past every id
// returned so far.
import { AckWriter } from "../../../harness/ack_journal.ts";
import { childArgs, marked, openStoreFor, waitToBeKilled } from "../../contract/child_runtime.ts";
import { answerOf } from "../../contract/typed.ts";
import type { Store } from "../../contract/target.ts";
import { type Call, resolveArgs } from "../_calls.ts";

const [target, dbPath, journalPath, readyPath, callsJson] = childArgs(
  5,
  "calls.ts <target> <db> <journal> <ready|-> <calls json>",
);
const calls = JSON.parse(callsJson!) as Call[];
const journal = new AckWriter(journalPath!);
// A store's answer may hold values JSON cannot write (a bigint id): written as text.
const plain = (value: unknown) =>
  JSON.parse(JSON.stringify(value, (_, v) => typeof v === "bigint" ? v.toString() : v));

const values: unknown[] = [];
let store: Store | undefined;
const opened = await answerOf(async () => {
  store = await openStoreFor(target!, dbPath!);
});
journal.write({ label: "open", answer: opened });
if (store) {
  for (const call of calls) {
    const method = (store as unknown as Record<string, unknown>)[call.method];
    if (typeof method !== "function") {
      journal.write({ label: call.label, missing: true });
      values.push(undefined);
      continue;
    }
    const args = resolveArgs(call.args, values);
    const answer = await marked(call.label, () => answerOf(() => method.apply(store, args)));
    values.push(answer.value);
    journal.write({
      label: call.label,
      answer: answer.threw ? answer : { ...answer, value: plain(answer.value) },
    });
  }
}
if (readyPath === "-") {
  await store?.close();
  journal.close();
} else {
  waitToBeKilled(readyPath!);
}
