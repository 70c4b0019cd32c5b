// Cell 1's child: appends m0, m1, … to one session and journals each acknowledged append.
import { AckWriter } from "../../../harness/ack_journal.ts";
import { killSelf } from "../../../harness/self_kill.ts";
import { childArgs, lifetimeGuard, marked, openStoreFor } from "../../contract/child_runtime.ts";

const [target, dbPath, ackPath, selfKill] = childArgs(
  3,
  "prefix_writer.ts <target> <db> <acks> [kill itself after this many acknowledged appends]",
);
const killAfter = selfKill === undefined ? Infinity : Number(selfKill);
const store = await openStoreFor(target!, dbPath!);
await store.createSession("cell1");
// A restarted writer resumes after what the store recovered.
const start = (await store.getMessages("cell1")).length;
const acks = new AckWriter(ackPath!);
const guard = lifetimeGuard();
for (let i = start;; i++) {
  guard();
  // Marked for the kill series inside an append (a no-op otherwise).
  const rowid = await marked(
    "appendMessage",
    () => store.appendMessage("cell1", { role: "user", content: `m${i}` }),
  );
  acks.write({ i, rowid });
  if (i - start + 1 >= killAfter) killSelf();
}
