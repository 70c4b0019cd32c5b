// Cell 5's sender: records N obligations, then for each marks it attempting, sends it
// (the obligation id as the idempotency key) and marks it delivered. Its kill points
// come from SESSION_DB_CRASH_AT: the store's, or its own between the store's calls
// (recorded, attempting, sent: each acknowledged, the next step not taken).
import { crashPoint, defineCrashPoints } from "../session_db/crash_points.ts";
import { send, SENDER_AFTER_ATTEMPTING, SENDER_AFTER_RECORD, SENDER_AFTER_SEND } from "./_inbox.ts";
import { childArgs, openStoreFor } from "./child_runtime.ts";

defineCrashPoints([SENDER_AFTER_RECORD, SENDER_AFTER_ATTEMPTING, SENDER_AFTER_SEND]);

const [target, dbPath, inbox, count] = childArgs(4, "_sender.ts <target> <db> <inbox> <n>");
const store = await openStoreFor(target!, dbPath!);
await store.createSession("cell5");
const recorded = [];
for (let i = 0; i < Number(count); i++) {
  recorded.push(
    await store.recordObligation!({
      sessionId: "cell5",
      messageRef: `m${i}`,
      content: `effect ${i}`,
    }),
  );
  crashPoint(SENDER_AFTER_RECORD);
}
for (const obligation of recorded) {
  const fence = await store.markAttempting!(obligation.obligationId, obligation.deliveryFence);
  if (fence === null) throw new Error(`sender: markAttempting lost on ${obligation.obligationId}`);
  crashPoint(SENDER_AFTER_ATTEMPTING);
  send(inbox!, {
    key: obligation.obligationId,
    obligationId: obligation.obligationId,
    content: obligation.content,
  });
  crashPoint(SENDER_AFTER_SEND);
  if (!await store.markDelivered!(obligation.obligationId, fence)) {
    throw new Error(`sender: markDelivered lost on ${obligation.obligationId}`);
  }
}
await store.close();
