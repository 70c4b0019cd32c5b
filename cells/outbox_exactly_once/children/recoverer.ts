// Cell 5's recoverer (a boot): opens the store, waits for the barrier (unless it is "-"),
// takes over the dead processes' obligations with sweepRecoverable and redelivers them:
// `send` → mark attempting, send, mark delivered; `resend` → send (under the key, with
// the recovery marker in front of the content when the sweep gave one), mark delivered
// with the takeover's fence; `unknown` → nothing. Exits 0 and prints what its sweep
// claimed and what it did. Armed with `recoverer:afterSend` it dies right after its first
// send. Given a journal, it journals what its sweep acknowledged (each obligation taken,
// its action, state, fence and marker) before acting on it. The sweep is bracketed by
// marks (for a kill series or a hold inside it). Its transport flag `-` calls the sweep
// with `idempotentTransport` omitted (a plain transport, as `0` says it).
import { crashPoint, defineCrashPoints } from "../../../session_db/crash_points.ts";
import { AckWriter } from "../../../harness/ack_journal.ts";
import { awaitBarrier, signalReady } from "../../../harness/barrier.ts";
import { TIMED_OUT } from "../../../harness/child.ts";
import { RECOVERER_AFTER_SEND, send } from "../inbox.ts";
import { childArgs, marked, openStoreFor } from "../../contract/child_runtime.ts";
import { printReport } from "../../../internal/report_line.ts";

defineCrashPoints([RECOVERER_AFTER_SEND]);

const [target, dbPath, inbox, runDir, name, barrier, idempotent, journal] = childArgs(
  7,
  "recoverer.ts <target> <db> <inbox> <run dir> <name> <barrier|-> <idempotent 0|1|-> [journal]",
);
const store = await openStoreFor(target!, dbPath!);
if (barrier !== "-") {
  signalReady(runDir!, name!);
  if (!awaitBarrier(barrier!, 30_000)) {
    console.error(`recoverer ${name}: the barrier was not released within 30 s`);
    Deno.exit(TIMED_OUT);
  }
}
// "-": the option left out, which the contract reads as a plain transport.
const sweep = idempotent === "-" ? {} : { idempotentTransport: idempotent === "1" };
const taken = await marked("sweepRecoverable", () => store.sweepRecoverable!(sweep));
const claims = taken.map(({ obligation, action, recoveryMarker }) => ({
  id: obligation.obligationId,
  action,
  state: obligation.state,
  fence: obligation.deliveryFence,
  marker: recoveryMarker ?? null,
}));
if (journal) {
  const acks = new AckWriter(journal);
  for (const claim of claims) acks.write(claim);
  acks.close();
}
const done: string[] = [];
for (const { obligation, action, idempotencyKey, recoveryMarker } of taken) {
  const id = obligation.obligationId;
  let fence: number | null = obligation.deliveryFence;
  if (action === "unknown") {
    done.push(`${id}:unknown`);
    continue;
  }
  if (action === "send") {
    fence = await store.markAttempting!(id, obligation.deliveryFence);
    if (fence === null) {
      done.push(`${id}:lost-cas`);
      continue;
    }
  }
  send(inbox!, {
    key: idempotencyKey,
    obligationId: id,
    content: obligation.content,
    marker: recoveryMarker,
  });
  crashPoint(RECOVERER_AFTER_SEND);
  done.push(`${id}:${action}:${await store.markDelivered!(id, fence) ? "delivered" : "cas-lost"}`);
}
await store.close();
printReport({ name, pid: Deno.pid, claims, done });
