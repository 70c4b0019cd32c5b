// Cell 7's stops inside fenced operations (see _fence_series.ts). The actor becomes an owner
// (the compression lock under a dead holder, a handoff claim, an outbox attempt), journals
// what the new owner needs, then makes its fenced write bracketed by marks: the recorder
// stops it before a lock call inside. The new owner, its store already open, waits for the
// parent's go, takes over (and says whether the actor's write had landed), then waits for a
// second go and acts as the owner it now is. Each writes its outcome as JSON to `out`.
import { awaitBarrier } from "../../harness/barrier.ts";
import { CHILD_LIFETIME_MS, childArgs, marked, openStoreFor } from "../child_runtime.ts";
import { answerOf } from "../_typed.ts";

const [target, db, owner, role, out, go, session] = childArgs(
  7,
  "fence_child.ts <target> <db> <compressionLock|handoffClaim|outboxAttempt> <actor|owner> <out> <go> <session>",
);
const leaseMs = 3_600_000;
const store = await openStoreFor(target!, db!);
const write = (path: string, value: unknown) =>
  Deno.writeTextFileSync(path, JSON.stringify(value) + "\n");

/** Above Linux's PID_MAX_LIMIT (2^22): never a live process. */
const DEAD_PID = 4_194_305;

if (role === "actor") {
  // The lock's holder names a dead process, its lease an hour: the new owner may take it
  // over at once (liveness), and the stale write's own expiry check still passes, so only
  // the fence (the holder) can refuse it.
  const holder = `cell7-stale:pid=${DEAD_PID}`;
  let acquired: Record<string, unknown> = {};
  if (owner === "compressionLock") {
    if (!await store.tryAcquireCompressionLock!(session!, holder, Number(leaseMs))) {
      throw new Error(`Cannot take the free compression lock of ${session}`);
    }
  } else if (owner === "handoffClaim") {
    if (!await store.claimHandoff!(session!)) throw new Error(`Cannot claim ${session}`);
  } else {
    const obligation = await store.recordObligation!({
      sessionId: session!,
      messageRef: "cell7-stop",
      content: "stale owner's payload",
    });
    const fence = await store.markAttempting!(obligation.obligationId, obligation.deliveryFence);
    if (fence === null) throw new Error(`Cannot mark ${obligation.obligationId} attempting`);
    acquired = { id: obligation.obligationId, fence };
  }
  write(`${out}.acquired`, { ...acquired, at: Date.now() });
  const answer = await answerOf(() =>
    marked(owner!, () => {
      if (owner === "compressionLock") {
        return store.publishCompressionChild!({
          parentId: session!,
          childId: "child-stale",
          holder,
          messages: [{ role: "system", content: "stale summary" }],
        });
      }
      if (owner === "handoffClaim") return store.completeHandoff!(session!);
      return store.markDelivered!(String(acquired.id), Number(acquired.fence));
    })
  );
  write(out!, answer);
} else {
  Deno.writeTextFileSync(`${out}.ready`, "ready");
  if (!awaitBarrier(go!, CHILD_LIFETIME_MS)) throw new Error(`the new owner was never released`);
  const holder = `cell7-new:pid=${Deno.pid}`;
  const acquired = JSON.parse(Deno.readTextFileSync(`${out}.acquired`)) as {
    id?: string;
    fence?: number;
  };
  // The takeover, then a look at whether the actor's write had landed before it.
  let took: unknown;
  let landed: boolean;
  if (owner === "compressionLock") {
    took = await store.tryAcquireCompressionLock!(session!, holder, 3_600_000);
    landed = (await store.listSessions!()).some((s) => s.id === "child-stale");
  } else if (owner === "handoffClaim") {
    const failed = await store.failHandoff!(session!, "the claimant stalled");
    const requested = await store.requestHandoff!(session!, "cell7");
    took = failed && requested && await store.claimHandoff!(session!);
    landed = false; // a completed handoff cannot be failed: `failed` says it
  } else {
    took = await store.markUnknown!(acquired.id!, acquired.fence!, "the owner stalled");
    landed = (await store.getObligation!(acquired.id!))?.state === "delivered";
  }
  write(`${out}.took`, { took, landed });
  if (!awaitBarrier(`${go}.act`, CHILD_LIFETIME_MS)) throw new Error(`no go to act`);
  // The new owner acts (the outbox attempt's settling mark was its act already).
  let acted: unknown = true;
  if (owner === "compressionLock") {
    acted = await answerOf(async () => {
      await store.publishCompressionChild!({
        parentId: session!,
        childId: "child-new",
        holder,
        messages: [{ role: "system", content: "new summary" }],
      });
      return await store.releaseCompressionLock!(session!, holder);
    });
  } else if (owner === "handoffClaim") {
    acted = await answerOf(() => store.completeHandoff!(session!));
  }
  write(out!, { took, landed, acted });
}
await store.close();
