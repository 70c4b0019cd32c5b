// Cell 5's restarted sender: the application back after the crash, alive while the
// recoverers race. Before they start it records two obligations of its own (one left
// pending, one marked attempting and held), re-records the dead sender's (a no-op that
// returns each as stored) and tries to attempt each one no longer pending, which must be
// refused; given the journal of a boot killed inside its redelivery, it books the dead
// sender's last unbooked send with the sender's fence from its journal, which must be
// refused too, but only once that order is shown to have happened: the killed boot's
// acknowledged sweep took it over and the file no longer holds it attempting under the old
// fence (else the probe is reported not exercised, never passed or failed). Once the
// recoverers are done it sweeps (nothing must be left to take), delivers its own two, and
// waits to be killed right after the last acknowledged mark, with no further write.
// Exits 1 naming every refusal that did not happen.
import { readAckJournal } from "../../../harness/ack_journal.ts";
import { awaitBarrier } from "../../../harness/barrier.ts";
import { TIMED_OUT } from "../../../harness/child.ts";
import { send } from "../inbox.ts";
import { childArgs, openStoreFor, waitToBeKilled } from "../../contract/child_runtime.ts";
import type { StoredObligation } from "../../contract/target.ts";
import { recordContent, shownContent } from "../_content.ts";

const [target, dbPath, inbox, dir, recorded, journal, takeovers, idempotent] = childArgs(
  8,
  "restarted_sender.ts <target> <db> <inbox> <dir> <recorded> <sender journal> <killed boot's journal|-> <idempotent 0|1>",
);
const store = await openStoreFor(target!, dbPath!);
const wrong: string[] = [];
const record = (messageRef: string, prefix: string, i: number) =>
  recordContent(store, { sessionId: "cell5", messageRef, prefix, i });
const describe = (o: StoredObligation) =>
  `"${shownContent(o.content)}" (${o.obligationId}, ${o.state})`;

await store.createSession("cell5");
const own = [await record("live0", "live effect", 0), await record("live1", "live effect", 1)];
const held = await store.markAttempting!(own[1]!.obligationId, own[1]!.deliveryFence);
if (held === null) {
  throw new Error(`restarted sender: markAttempting lost on its own ${describe(own[1]!)}`);
}
for (let i = 0; i < Number(recorded); i++) {
  const o = await record(`m${i}`, "effect", i);
  if (o.state === "pending") continue;
  const fence = await store.markAttempting!(o.obligationId, o.deliveryFence);
  if (fence !== null) {
    wrong.push(
      `markAttempting(${o.deliveryFence}) moved ${
        describe(o)
      } to attempting (fence ${fence}): only a pending obligation may be attempted`,
    );
  }
}
let booking = "not asked";
if (takeovers !== "-") {
  const entries = readAckJournal<{ op: string; id: string; fence?: number }>(journal!);
  const booked = new Set(entries.filter((e) => e.op === "delivered").map((e) => e.id));
  const sent = entries.findLast((e) => e.op === "sent" && !booked.has(e.id));
  if (!sent) throw new Error(`restarted sender: no unbooked send in ${journal}`);
  const taken = readAckJournal<{ id: string }>(takeovers!).some((e) => e.id === sent.id);
  const now = store.getObligation
    ? await store.getObligation(sent.id)
    : (await store.listObligations!()).find((o) => o.obligationId === sent.id);
  if (!taken) booking = `not exercised: the killed boot's sweep did not return ${sent.id}`;
  else if (now?.state === "attempting" && now.deliveryFence === sent.fence) {
    booking = `not exercised: ${sent.id} is still attempting under fence ${sent.fence} on disk`;
  } else {
    booking = "exercised";
    if (await store.markDelivered!(sent.id, sent.fence!)) {
      wrong.push(
        `markDelivered(${sent.id}, ${sent.fence}) booked the dead sender's send with its old fence after a recovery took the obligation over (${now?.state}, fence ${now?.deliveryFence}): a superseded or settled attempt cannot book a delivery`,
      );
    }
  }
}
Deno.writeTextFileSync(`${dir}/restarted-ready`, JSON.stringify({ pid: Deno.pid, booking }));
if (!awaitBarrier(`${dir}/go-late`, 60_000)) {
  console.error("restarted sender: the late barrier was not released within 60 s");
  Deno.exit(TIMED_OUT);
}
const late = await store.sweepRecoverable!({ idempotentTransport: idempotent === "1" });
if (late.length) {
  wrong.push(
    `a sweep after every recoverer finished took ${
      late.map((r) => `${describe(r.obligation)}: ${r.action}`).join(", ")
    }: the dead processes' obligations were all settled, and a live process's are its own`,
  );
}
const fence = await store.markAttempting!(own[0]!.obligationId, own[0]!.deliveryFence);
if (fence === null) {
  wrong.push(
    `markAttempting lost this live process's own pending ${
      describe(own[0]!)
    }: a sweep took it over`,
  );
} else {
  send(inbox!, {
    key: own[0]!.obligationId,
    obligationId: own[0]!.obligationId,
    content: own[0]!.content,
  });
  if (!await store.markDelivered!(own[0]!.obligationId, fence)) {
    wrong.push(`markDelivered lost this live process's own attempt at ${describe(own[0]!)}`);
  }
}
send(inbox!, {
  key: own[1]!.obligationId,
  obligationId: own[1]!.obligationId,
  content: own[1]!.content,
});
if (!await store.markDelivered!(own[1]!.obligationId, held)) {
  wrong.push(
    `markDelivered lost this live process's own attempt at ${
      describe(own[1]!)
    } (fence ${held}), held while the recoverers ran`,
  );
}
if (wrong.length) {
  console.error(`restarted sender:\n${wrong.join("\n")}`);
  Deno.exit(1);
}
waitToBeKilled(`${dir}/restarted-acked`);
