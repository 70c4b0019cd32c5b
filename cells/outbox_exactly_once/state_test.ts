// What the power-loss cell 5 reads from the sender's journal lines before an instant: each
// obligation's history, and the store call in flight that the file may hold one step ahead.
import { deepStrictEqual, throws } from "node:assert/strict";
import { type SenderAck, senderFromAcks } from "./state.ts";
import { obligationContent } from "./_content.ts";

const recorded = (i: number): SenderAck => ({
  op: "recorded",
  id: `ob-${i}`,
  content: `effect ${i}`,
});
const all = [0, 1, 2].map(recorded);

Deno.test("senderFromAcks: before any line the first recording is in flight", () => {
  const sender = senderFromAcks([], 3);
  const content = obligationContent("effect", 0);
  deepStrictEqual(sender.histories, [{ content, kind: "pending" }]);
  deepStrictEqual(sender.next, { content, from: "absent", to: "pending" });
  deepStrictEqual([sender.acknowledgedRecorded, sender.recorded], [0, 1]);
});

Deno.test("senderFromAcks: once all are recorded the first attempt is in flight", () => {
  const sender = senderFromAcks(all, 3);
  deepStrictEqual(sender.histories.map((h) => h.kind), ["pending", "pending", "pending"]);
  deepStrictEqual(sender.next, { content: "effect 0", from: "pending", to: "attempting" });
});

Deno.test("senderFromAcks: after an attempt the send is outside the store, nothing in flight", () => {
  const sender = senderFromAcks([...all, { op: "attempting", id: "ob-0", fence: 1 }], 3);
  deepStrictEqual(sender.histories.map((h) => h.kind), ["attempting", "pending", "pending"]);
  deepStrictEqual(sender.next, undefined);
});

Deno.test("senderFromAcks: after a send its delivery is in flight, then the next attempt", () => {
  const sent = [...all, { op: "attempting", id: "ob-0", fence: 1 }, {
    op: "sent",
    id: "ob-0",
    fence: 1,
  }] as SenderAck[];
  const sender = senderFromAcks(sent, 3);
  deepStrictEqual(sender.next, { content: "effect 0", from: "sent", to: "delivered" });
  deepStrictEqual([...sender.sent], ["ob-0"]);
  const delivered = senderFromAcks([...sent, { op: "delivered", id: "ob-0" }], 3);
  deepStrictEqual(delivered.histories.map((h) => h.kind), ["delivered", "pending", "pending"]);
  deepStrictEqual(delivered.acknowledgedDelivered, 1);
  deepStrictEqual(delivered.next, { content: "effect 1", from: "pending", to: "attempting" });
});

Deno.test("senderFromAcks: a step of an obligation never recorded is an error", () => {
  throws(() => senderFromAcks([{ op: "delivered", id: "ob-9" }], 3), /unrecorded ob-9/);
});
