// Cell 8's second life, on a recovered file: resolves a chain's root to its tip, appends
// through it, rotates the tip into `<tip>.r` under its own lock, resolves the root again and
// appends through the new tip; journals each acknowledgement and SIGKILLs itself right
// after the last (no further write, no close).
import { AckWriter } from "../../../harness/ack_journal.ts";
import { killSelf } from "../../../harness/self_kill.ts";
import { childArgs, openStoreFor } from "../../contract/child_runtime.ts";
import { LOCK_TTL_MS } from "../../rotation_atomicity/children/lock_taker.ts";
import { type ChainAck, resumedChildOf } from "../_chain.ts";

const [target, dbPath, ackPath, root] = childArgs(4, "resumer.ts <target> <db> <acks> <root>");
const store = await openStoreFor(target!, dbPath!);
const acks = new AckWriter(ackPath!);
const journal = (ack: ChainAck) => acks.write(ack);
const holder = `cell8-resumer:pid=${Deno.pid}`;

async function appendThroughTip(label: string): Promise<string> {
  const tip = await store.resolveResumeSessionId!(root!);
  journal({ op: "resolved", root: root!, tip });
  const content = `resumed ${label} through ${tip}`;
  const id = await store.appendMessage(tip, { role: "user", content });
  journal({ op: "append", session: tip, id, content });
  return tip;
}

const tip = await appendThroughTip("0");
if (!await store.tryAcquireCompressionLock!(tip, holder, LOCK_TTL_MS)) {
  throw new Error(`resumer: could not take the compression lock of the tip ${tip}`);
}
const childId = resumedChildOf(tip);
await store.publishCompressionChild!({
  parentId: tip,
  childId,
  holder,
  messages: [{ role: "system", content: `summary of ${tip}` }],
});
await store.releaseCompressionLock!(tip, holder);
journal({ op: "rotate", parentId: tip, childId });
await appendThroughTip("1");
killSelf();
