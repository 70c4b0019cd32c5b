// Acknowledged writes, the last followed by nothing: the child makes each store call,
// journals what the store answered, and (before the next) waits for the parent's go, which
// comes once the parent has read the write from its own process; after the last it waits
// to be killed with no other write and no close. A store that returns before COMMIT
// (leaving it to the next write or to close) shows the write to no other process, and
// loses the last at the kill. Used by cell 1 (createSession; the same user turn appended
// twice), cell 2 (the handoff) and cell 5 (the same content recorded twice, for two messages).
// An append or a recording the store refuses with an error of its own class is journaled as
// refused (it changed nothing); any other error ends the child.
import { AckWriter } from "../../../harness/ack_journal.ts";
import { awaitBarrier } from "../../../harness/barrier.ts";
import { TIMED_OUT } from "../../../harness/child.ts";
import { childArgs, openStoreFor, waitToBeKilled } from "../../contract/child_runtime.ts";
import { GENERIC_ERRORS, retriedWhileBusy } from "../../contract/typed.ts";
import { REPEATED_EFFECT, REPEATED_TURN } from "../_repeated.ts";

const [target, dbPath, acksPath, readyPath, ...writes] = childArgs(
  5,
  "last_write.ts <target> <db> <acks> <ready> <createSession|appendMessage|recordObligation|requestHandoff|claimHandoff>:<session>...",
);
const store = await openStoreFor(target!, dbPath!);

/**
 * Makes `write`: what it answered, or the name of the store's own error that refused it
 * (changing nothing); an untyped error is thrown.
 */
async function refusedOr(write: () => unknown): Promise<unknown> {
  try {
    return await retriedWhileBusy(write);
  } catch (error) {
    const name = error instanceof Error ? error.name : typeof error;
    if (GENERIC_ERRORS.has(name)) throw error;
    return { refused: name };
  }
}
const acks = new AckWriter(acksPath!);
for (const [i, write] of writes.entries()) {
  const at = write.indexOf(":");
  const [method, session] = [write.slice(0, at), write.slice(at + 1)];
  let answer: unknown = true;
  if (method === "createSession") await store.createSession(session);
  else if (method === "requestHandoff") answer = await store.requestHandoff!(session, "last-write");
  else if (method === "claimHandoff") answer = await store.claimHandoff!(session);
  else if (method === "appendMessage") {
    answer = await refusedOr(() => store.appendMessage(session, REPEATED_TURN));
  } else if (method === "recordObligation") {
    // Each for a message of its own: the same content, another message reference.
    const obligation = {
      sessionId: session,
      messageRef: `${session}-message-${i}`,
      content: REPEATED_EFFECT,
    };
    answer = await refusedOr(async () => (await store.recordObligation!(obligation)).obligationId);
  } else {
    console.error(
      `Invalid write "${write}": use createSession, appendMessage, recordObligation, requestHandoff or claimHandoff, a colon, and the session`,
    );
    Deno.exit(2);
  }
  acks.write({ method, session, answer });
  if (i < writes.length - 1 && !awaitBarrier(`${readyPath}.${i}`, 30_000)) {
    console.error(`last write: no go after ${write} within 30 s`);
    Deno.exit(TIMED_OUT);
  }
}
acks.close();
waitToBeKilled(readyPath!);
