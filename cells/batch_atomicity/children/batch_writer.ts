// Cell 9's child: appends batches of 1 to 20 messages to its writer's sessions, journaling
// each batch when invoked and again, with its ids, once acknowledged.
import { AckWriter } from "../../../harness/ack_journal.ts";
import { killSelf } from "../../../harness/self_kill.ts";
import { waitFor } from "../../../harness/wait_for.ts";
import { childArgs, lifetimeGuard, marked, openStoreFor } from "../../contract/child_runtime.ts";
import type { Store } from "../../contract/target.ts";
import { writtenOrPlain } from "../../engine/_texts.ts";
import { type BatchEntry, batchOf, memberOf, writerSessions } from "../batches.ts";
import { exists } from "../../../internal/fs.ts";

const [target, dbPath, journalPath, writer, selfKill, turns] = childArgs(
  4,
  "batch_writer.ts <target> <db> <journal> <writer> [kill itself after this many acknowledged batches] [turns folder: batch b waits for <folder>/<writer>-<b>]",
);
const killAfter = selfKill === undefined ? Infinity : Number(selfKill);
const store = await openStoreFor(target!, dbPath!);
const sessions = writerSessions(writer!);
for (const session of sessions) await store.createSession(session);

/** A restarted writer goes on after the last batch the store recovered. */
async function firstBatch(store: Store): Promise<number> {
  let last = -1;
  for (const session of sessions) {
    for (const row of await store.getMessages(session)) {
      const member = memberOf(row.content);
      if (member && member.w === writer) last = Math.max(last, member.b);
    }
  }
  return last + 1;
}

const journal = new AckWriter(journalPath!);
const write = (entry: BatchEntry) => journal.write(entry);
const guard = lifetimeGuard();
let acknowledged = 0;
for (let b = await firstBatch(store);; b++) {
  guard();
  if (turns !== undefined) {
    // Alternating writers: the test process hands out the turns, one batch at a time.
    const turn = `${turns}/${writer}-${b}`;
    await waitFor(() => exists(turn), { what: `the turn ${turn}`, deadlineMs: 120_000 });
  }
  const { session, messages } = batchOf(writer!, b);
  write({ k: "inv", w: writer!, b, s: session, n: messages.length, t0: Date.now() });
  // Marked for the kill series inside a batch (a no-op otherwise). A batch whose texts the
  // store refuses with a typed error is written again plain, as the same invocation.
  const ids = await marked(
    "appendMessages",
    () =>
      writtenOrPlain((plain) =>
        store.appendMessages!(session, plain ? batchOf(writer!, b, true).messages : messages)
      ),
  );
  write({ k: "ack", w: writer!, b, ids, t1: Date.now() });
  if (++acknowledged >= killAfter) killSelf();
}
