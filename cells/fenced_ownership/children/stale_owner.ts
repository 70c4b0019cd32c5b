// Cell 7's child: becomes an owner (takes the compression lock, claims a handoff, or
// marks an obligation attempting), says so, waits at a barrier — where the parent
// SIGSTOPs it past its lease and lets another process take over — and, once continued,
// acts as the owner it no longer is. It writes what the store answered.
import { TIMED_OUT } from "../../../harness/child.ts";
import { exists } from "../../../internal/fs.ts";
import { childArgs, openStoreFor } from "../../contract/child_runtime.ts";
import { answerOf } from "../../contract/typed.ts";

const [target, dbPath, owner, session, leaseMs, acquiredPath, goPath, resultPath, beatPath] =
  childArgs(
    9,
    "stale_owner.ts <target> <db> <compressionLock|handoffClaim|outboxAttempt> <session> <lease ms> <acquired> <go> <result> <heartbeat>",
  );
const store = await openStoreFor(target!, dbPath!);
const holder = `cell7-stale:pid=${Deno.pid}`;

/** What the owner took: its lock's holder, or its attempt's obligation id (as the store gave it) and fence. */
interface Acquired {
  holder?: string;
  id?: string;
  fence?: number;
}

/** Becomes the owner; returns what the parent needs to take over. */
async function acquire(): Promise<Acquired> {
  if (owner === "compressionLock") {
    if (!await store.tryAcquireCompressionLock!(session!, holder, Number(leaseMs))) {
      throw new Error(`Cannot take the free compression lock of ${session}`);
    }
    return { holder };
  }
  if (owner === "handoffClaim") {
    if (!await store.claimHandoff!(session!)) throw new Error(`Cannot claim ${session}`);
    return {};
  }
  const obligation = await store.recordObligation!({
    sessionId: session!,
    messageRef: "cell7",
    content: "stale owner's payload",
  });
  const fence = await store.markAttempting!(obligation.obligationId, obligation.deliveryFence);
  if (fence === null) throw new Error(`Cannot mark ${obligation.obligationId} attempting`);
  return { id: obligation.obligationId, fence };
}

/** Acts as the owner it was. */
function act(acquired: Acquired): Promise<unknown> | unknown {
  if (owner === "compressionLock") {
    return store.publishCompressionChild!({
      parentId: session!,
      childId: "child-stale",
      holder,
      messages: [{ role: "system", content: "stale summary" }],
    });
  }
  if (owner === "handoffClaim") return store.completeHandoff!(session!);
  return store.markDelivered!(acquired.id!, acquired.fence!);
}

const acquired = await acquire();
Deno.writeTextFileSync(acquiredPath!, JSON.stringify({ ...acquired, at: Date.now() }) + "\n");
// Waits with a heartbeat every few ms, so the parent can see that SIGSTOP froze it.
const end = performance.now() + 60_000;
for (let beat = 1; !exists(goPath!); beat++) {
  if (performance.now() > end) Deno.exit(TIMED_OUT);
  Deno.writeTextFileSync(beatPath!, `${beat}\n`);
  await new Promise((resolve) => setTimeout(resolve, 5));
}
const result = await answerOf(() => act(acquired));
Deno.writeTextFileSync(resultPath!, JSON.stringify(result) + "\n");
await store.close();
