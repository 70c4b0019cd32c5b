// Cell 5's sender: records N obligations, then for each marks it attempting, sends it
// (the obligation id as the idempotency key) and marks it delivered. Its kill points
// come from SESSION_DB_CRASH_AT: the store's, or its own between the store's calls
// (recorded, attempting, sent: each acknowledged, the next step not taken). It journals
// each acknowledged recording (id and content), attempt, send and delivery (the fence
// with an attempt and a send) when given a journal, and with a window of K it marks K
// obligations attempting before sending the first. The contents are `<prefix> <i>` (default
// `effect <i>`) and one of cell 1's texts in turn (`../_content.ts`; plain when the store
// refuses the text with a typed error), for message references `m<i>` (a later life of the
// application uses another prefix, so its obligations are new ones).
// With S sessions (default 1, session `cell5`) obligation i goes to session `cell5-<i % S>`.
// Given a barrier, it opens the store and waits for it before its first write.
import { crashPoint, defineCrashPoints } from "../../../session_db/crash_points.ts";
import { AckWriter } from "../../../harness/ack_journal.ts";
import { awaitBarrier } from "../../../harness/barrier.ts";
import { TIMED_OUT } from "../../../harness/child.ts";
import { send, SENDER_AFTER_ATTEMPTING, SENDER_AFTER_RECORD, SENDER_AFTER_SEND } from "../inbox.ts";
import { childArgs, openStoreFor } from "../../contract/child_runtime.ts";
import { obligationContent, recordContent } from "../_content.ts";

defineCrashPoints([SENDER_AFTER_RECORD, SENDER_AFTER_ATTEMPTING, SENDER_AFTER_SEND]);

const [target, dbPath, inbox, count, journalPath, windowArg, prefixArg, sessionsArg, barrier] =
  childArgs(
    4,
    "sender.ts <target> <db> <inbox> <n> [journal|-] [window] [prefix] [sessions] [barrier|-]",
  );
const journal = journalPath && journalPath !== "-" ? new AckWriter(journalPath) : undefined;
const window = Number(windowArg ?? 1);
const prefix = prefixArg ?? "effect";
const ref = (i: number) => prefix === "effect" ? `m${i}` : `${prefix.replace(/\W/g, "_")}-m${i}`;
const sessions = Number(sessionsArg ?? 1);
const session = (i: number) => sessions === 1 ? "cell5" : `cell5-${i % sessions}`;
const store = await openStoreFor(target!, dbPath!);
if (barrier && barrier !== "-" && !awaitBarrier(barrier, 120_000, 5)) {
  console.error(`sender: the barrier ${barrier} was not released within 120 s`);
  Deno.exit(TIMED_OUT);
}
for (let j = 0; j < sessions; j++) await store.createSession(session(j));
const recorded = [];
for (let i = 0; i < Number(count); i++) {
  const obligation = await recordContent(store, {
    sessionId: session(i),
    messageRef: ref(i),
    prefix,
    i,
  });
  recorded.push(obligation);
  const content = obligationContent(prefix, i);
  journal?.write({ op: "recorded", id: obligation.obligationId, content });
  crashPoint(SENDER_AFTER_RECORD);
}
for (let from = 0; from < recorded.length; from += window) {
  const batch = recorded.slice(from, from + window);
  const fences: number[] = [];
  for (const obligation of batch) {
    const id = obligation.obligationId;
    const fence = await store.markAttempting!(id, obligation.deliveryFence);
    if (fence === null) throw new Error(`sender: markAttempting lost on ${id}`);
    journal?.write({ op: "attempting", id, fence });
    fences.push(fence);
    crashPoint(SENDER_AFTER_ATTEMPTING);
  }
  for (const [i, obligation] of batch.entries()) {
    const id = obligation.obligationId;
    send(inbox!, { key: id, obligationId: id, content: obligation.content });
    journal?.write({ op: "sent", id, fence: fences[i] });
    crashPoint(SENDER_AFTER_SEND);
    if (!await store.markDelivered!(id, fences[i]!)) {
      throw new Error(`sender: markDelivered lost on ${id}`);
    }
    journal?.write({ op: "delivered", id });
  }
}
await store.close();
