// Cell 8's first life: builds chains root -> continuation -> continuation, again and again
// (chain j: `c<j>-0` takes two appends, is rotated into `c<j>-1`, which takes an append and
// is rotated into `c<j>-2`, which takes an append), journaling every acknowledged append
// and rotation. Each publish is bracketed with marks, for the kill series.
import { AckWriter } from "../../../harness/ack_journal.ts";
import { childArgs, lifetimeGuard, marked, openStoreFor } from "../../contract/child_runtime.ts";
import { LOCK_TTL_MS } from "../../rotation_atomicity/children/lock_taker.ts";
import { type ChainAck, chainIds, ROOT_TURNS } from "../_chain.ts";
import type { Store } from "../../contract/target.ts";

const [target, dbPath, ackPath] = childArgs(3, "chain_rotator.ts <target> <db> <acks>");
const store = await openStoreFor(target!, dbPath!);
const acks = new AckWriter(ackPath!);
const journal = (ack: ChainAck) => acks.write(ack);
const holder = `cell8:pid=${Deno.pid}`;
const guard = lifetimeGuard();

async function append(store: Store, session: string, content: string): Promise<void> {
  const id = await store.appendMessage(session, { role: "user", content });
  journal({ op: "append", session, id, content });
}

for (let j = 0;; j++) {
  guard();
  const ids = chainIds("", j);
  await store.createSession(ids[0]!);
  for (let turn = 0; turn < ROOT_TURNS; turn++) await append(store, ids[0]!, `${ids[0]} ${turn}`);
  for (let k = 0; k + 1 < ids.length; k++) {
    const [parentId, childId] = [ids[k]!, ids[k + 1]!];
    if (!await store.tryAcquireCompressionLock!(parentId, holder, LOCK_TTL_MS)) {
      throw new Error(`chain rotator: could not take the compression lock of ${parentId}`);
    }
    await marked("publishCompressionChild", () =>
      store.publishCompressionChild!({
        parentId,
        childId,
        holder,
        messages: [{ role: "system", content: `summary of ${parentId}` }],
      }));
    await store.releaseCompressionLock!(parentId, holder);
    journal({ op: "rotate", parentId, childId });
    await append(store, childId, `${childId} 0`);
  }
}
