// Cell 9's long session: appends its messages to one session in batches, journaling each
// acknowledged batch with its ids, and kills itself right after the last.
import { AckWriter } from "../../../harness/ack_journal.ts";
import { killSelf } from "../../../harness/self_kill.ts";
import { childArgs, lifetimeGuard, openStoreFor } from "../../contract/child_runtime.ts";
import {
  LONG_BATCH,
  LONG_MESSAGES,
  LONG_SESSION,
  type LongAck,
  longBatch,
} from "../../moves/_long_session.ts";

const [target, dbPath, journalPath] = childArgs(3, "long_writer.ts <target> <db> <journal>");
const store = await openStoreFor(target!, dbPath!);
await store.createSession(LONG_SESSION);
const journal = new AckWriter(journalPath!);
const guard = lifetimeGuard();
for (let b = 0; b < LONG_MESSAGES / LONG_BATCH; b++) {
  guard();
  const ids = await store.appendMessages!(LONG_SESSION, longBatch(b));
  journal.write({ b, ids } satisfies LongAck);
}
killSelf();
