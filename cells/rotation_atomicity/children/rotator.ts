// Cell 3's child: rotates parent-i into child-i, again and again, journaling each
// acknowledged rotation. A resumed one (on a recovered file) names its sessions with a
// prefix and SIGKILLs itself right after its n-th acknowledged rotation. Each child opens with
// its handoff (`_summary.ts`: a summary and up to two turns carried over); a summary's text that
// the store refuses with a typed error is published plain instead and journaled as such; an
// untyped refusal ends the rotator.
import { AckWriter } from "../../../harness/ack_journal.ts";
import { killSelf } from "../../../harness/self_kill.ts";
import { childArgs, lifetimeGuard, marked, openStoreFor } from "../../contract/child_runtime.ts";
import { writtenOrPlain } from "../../engine/_texts.ts";
import { handoffOf, plainSummary, summaryText } from "../_summary.ts";
import { LOCK_TTL_MS } from "./lock_taker.ts";

const [target, dbPath, ackPath, start, prefix = "", selfKill] = childArgs(
  4,
  "rotator.ts <target> <db> <acks> <start> [session prefix] [kill itself after this many acknowledged rotations]",
);
const killAfter = selfKill === undefined ? Infinity : Number(selfKill);
const store = await openStoreFor(target!, dbPath!);
const acks = new AckWriter(ackPath!);
const holder = `cell3:pid=${Deno.pid}`;
const guard = lifetimeGuard();
for (let i = Number(start);; i++) {
  guard();
  const parentId = `${prefix}parent-${i}`;
  const childId = `${prefix}child-${i}`;
  await store.createSession(parentId);
  await store.appendMessage(parentId, { role: "user", content: `turn ${i}` });
  if (!await store.tryAcquireCompressionLock!(parentId, holder, LOCK_TTL_MS)) {
    throw new Error(`rotator: could not take the compression lock of ${parentId}`);
  }
  const publish = (plain: boolean) =>
    marked(
      "publishCompressionChild",
      () =>
        store.publishCompressionChild!({
          parentId,
          childId,
          holder,
          messages: handoffOf(i, plain),
        }),
    );
  let plain = false;
  await writtenOrPlain((refused) => {
    plain = refused;
    return publish(refused);
  }, { plain: summaryText(i) !== plainSummary(i) });
  await store.releaseCompressionLock!(parentId, holder);
  acks.write({ i, parentId, childId, ...(plain ? { plainSummary: true } : {}) });
  if (i - Number(start) + 1 >= killAfter) killSelf();
}
