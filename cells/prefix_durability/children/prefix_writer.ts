// Cell 1's child: appends m0, m1, … (each followed by a text the store must keep as written,
// in the role of its turn: `_content.ts`) to one session and journals each acknowledged
// append. An append of a text beyond `m<i>` or in a role beyond the user's and the
// assistant's that throws is journaled as refused (typed or not) and the writer goes on (a
// store that cannot take a NUL, a long text or a tool turn alone is judged for that, and for
// its durability apart); any other error ends it.
import { AckWriter } from "../../../harness/ack_journal.ts";
import { killSelf } from "../../../harness/self_kill.ts";
import { childArgs, lifetimeGuard, marked, openStoreFor } from "../../contract/child_runtime.ts";
import { GENERIC_ERRORS } from "../../contract/typed.ts";
import { plainRole } from "../../engine/_roles.ts";
import { prefixContent, prefixRole, resumeIndex } from "../_content.ts";

const [target, dbPath, ackPath, selfKill] = childArgs(
  3,
  "prefix_writer.ts <target> <db> <acks> [kill itself after this many acknowledged appends]",
);
const killAfter = selfKill === undefined ? Infinity : Number(selfKill);
const store = await openStoreFor(target!, dbPath!);
await store.createSession("cell1");
// A restarted writer resumes after what the store recovered.
const start = resumeIndex(await store.getMessages("cell1"));
const acks = new AckWriter(ackPath!);
const guard = lifetimeGuard();
let acknowledged = 0;
for (let i = start;; i++) {
  guard();
  const content = prefixContent(i);
  let rowid: number;
  try {
    // Marked for the kill series inside an append (a no-op otherwise).
    rowid = await marked(
      "appendMessage",
      () => store.appendMessage("cell1", { role: prefixRole(i), content }),
    );
  } catch (error) {
    // Only a text beyond `m<i>` or a role beyond the user's and the assistant's may be refused.
    if (content === `m${i}` && prefixRole(i) === plainRole(i)) throw error;
    const name = error instanceof Error ? error.name : typeof error;
    const message = error instanceof Error ? error.message : String(error);
    acks.write({ i, refused: `${name}: ${message}`, typed: !GENERIC_ERRORS.has(name) });
    continue;
  }
  acks.write({ i, rowid });
  if (++acknowledged >= killAfter) killSelf();
}
