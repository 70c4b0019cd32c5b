// Cell 13's one child: opens the store in a fresh process, makes the calls it is given in
// order and journals what each returned or threw (the open first), then closes the store
// and exits 0, or, given a ready file, waits there to be SIGKILLed with nothing after its
// last call.
import { AckWriter } from "../../../harness/ack_journal.ts";
import { childArgs, openStoreFor, waitToBeKilled } from "../../contract/child_runtime.ts";
import { answerOf } from "../../contract/typed.ts";
import type { Store } from "../../contract/target.ts";
import type { Call } from "../_calls.ts";

const [target, dbPath, journalPath, readyPath, callsJson] = childArgs(
  5,
  "calls.ts <target> <db> <journal> <ready|-> <calls json>",
);
const calls = JSON.parse(callsJson!) as Call[];
const journal = new AckWriter(journalPath!);
// A store's answer may hold values JSON cannot write (a bigint id): written as text.
const plain = (value: unknown) =>
  JSON.parse(JSON.stringify(value, (_, v) => typeof v === "bigint" ? v.toString() : v));

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
      continue;
    }
    const answer = await answerOf(() => method.apply(store, call.args));
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
