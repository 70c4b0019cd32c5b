// The stops inside guarded writes (see ../guarded_stops.ts), one scenario each. The new owner
// (the `owner` role) starts first, its store open, and may prepare (claim, attempt) and
// share what the actor needs; the actor may acquire, then makes its guarded write bracketed
// by marks: the recorder stops it before a lock call inside. Released by the parent, the new
// owner looks whether the actor's write has landed, takes over (or acts against the write),
// and waits for a second go once the actor finished, to act as the owner it now is. Each
// writes its outcome as JSON to `out`; a fresh process (the `check` role) reads, once both
// finished, what the scenario must leave.
import { awaitBarrier } from "../../../harness/barrier.ts";
import {
  CHILD_LIFETIME_MS,
  childArgs,
  marked,
  openStoreFor,
} from "../../contract/child_runtime.ts";
import { answerOf, verdict } from "../../contract/typed.ts";
import type { Store } from "../../contract/target.ts";
import { rotatedChainTrace } from "../_rotated_chain.ts";

const [target, db, scenario, role, out, go, session, shared] = childArgs(
  8,
  "fence_child.ts <target> <db> <scenario> <actor|owner|check> <out> <go> <session> <shared>",
);
const store = await openStoreFor(target!, db!, { busy: "thrown" });
const S = session!;
const write = (path: string, value: unknown) =>
  Deno.writeTextFileSync(path, JSON.stringify(value) + "\n");
const readShared = () => JSON.parse(Deno.readTextFileSync(shared!)) as Record<string, unknown>;

/** Above Linux's PID_MAX_LIMIT (2^22): never a live process. */
const DEAD_PID = 4_194_305;
const HOUR = 3_600_000;
/** A lock whose holder is dead: the new owner may take it over at once, unexpired. */
const DEAD_HOLDER = `cell7-stale:pid=${DEAD_PID}`;
const OWN_HOLDER = `cell-owner:pid=${Deno.pid}`;

type Maybe<T> = T | Promise<T>;
interface Scenario {
  /** The new owner, before it says it is ready: what the actor needs goes to `shared`. */
  prepare?(): Maybe<unknown>;
  /** The actor, before its guarded write. */
  acquire?(): Maybe<unknown>;
  /** The actor's guarded write (stopped inside). */
  write(): Maybe<unknown>;
  /** The new owner, during the stop: whether the actor's write has landed. */
  landed(): Maybe<boolean>;
  /** The new owner, during the stop: the takeover or the write against the actor's. */
  takeover(): Maybe<unknown>;
  /** The new owner, once the actor finished: its work as the owner it now is. */
  act?(): Maybe<unknown>;
  /** A fresh process (role `check`), once both finished: what is wrong, or `undefined`. */
  check?(): Maybe<string | undefined>;
}

const messages = async () => (await store.getMessages(S)).map((m) => m.content);
const sessionIds = async () => (await store.listSessions!()).map((s) => s.id);
const publishAs = (holder: string, childId: string) =>
  store.publishCompressionChild!({
    parentId: S,
    childId,
    holder,
    messages: [{ role: "system", content: `${childId} summary` }],
  });
const publishAndRelease = async () => {
  await publishAs(OWN_HOLDER, "child-new");
  return await store.releaseCompressionLock!(S, OWN_HOLDER);
};
const shareObligation = async (store: Store) => {
  const o = await store.recordObligation!({ sessionId: S, messageRef: "stop", content: "x" });
  return { id: o.obligationId, fence: o.deliveryFence };
};

/** Records an obligation and marks it attempting; its id and fence are shared with the other. */
const attemptShared = async () => {
  const o = await shareObligation(store);
  const fence = await store.markAttempting!(o.id, o.fence);
  write(shared!, { id: o.id, fence });
  return fence;
};

/** The shared attempt's obligation id (as the store gave it: passed back as it is) and fence. */
const sharedAttempt = () => readShared() as { id: string; fence: number };

const SCENARIOS: Record<string, Scenario> = {
  // The compression lock's holder publishes after the lock was taken over.
  publish: {
    acquire: () => store.tryAcquireCompressionLock!(S, DEAD_HOLDER, HOUR),
    write: () => publishAs(DEAD_HOLDER, "child-stale"),
    landed: async () => (await sessionIds()).includes("child-stale"),
    takeover: () => store.tryAcquireCompressionLock!(S, OWN_HOLDER, HOUR),
    act: publishAndRelease,
  },
  // The former holder's release, after the lock was taken over, must leave the new lock.
  release: {
    acquire: () => store.tryAcquireCompressionLock!(S, DEAD_HOLDER, HOUR),
    write: () => store.releaseCompressionLock!(S, DEAD_HOLDER),
    landed: () => false, // the takeover succeeds either way: judged by the act
    takeover: () => store.tryAcquireCompressionLock!(S, OWN_HOLDER, HOUR),
    act: publishAndRelease,
  },
  // Two live processes acquire one lock: the one that checked first must not win late.
  acquire: {
    write: () => store.tryAcquireCompressionLock!(S, `cell-actor:pid=${Deno.pid}`, HOUR),
    landed: () => false, // the takeover is refused when it landed
    takeover: () => store.tryAcquireCompressionLock!(S, OWN_HOLDER, HOUR),
    act: publishAndRelease,
  },
  // An orphan (its holder dead) reopened after another process took its lock meanwhile.
  reopen: {
    acquire: async () =>
      await store.tryAcquireCompressionLock!(S, DEAD_HOLDER, HOUR) &&
      await store.endSession!(S, "compression"),
    write: () => store.reopenOrphanedCompressionSession!(S),
    landed: async () => (await store.listSessions!()).find((s) => s.id === S)?.endedAt === null,
    takeover: () => store.tryAcquireCompressionLock!(S, OWN_HOLDER, HOUR),
  },
  // A reopen of a session the user ended, reopened and rotated by another process meanwhile.
  reopenRotated: {
    acquire: () => store.endSession!(S, "user"),
    write: () => store.reopenSession!(S),
    landed: async () => (await store.listSessions!()).find((s) => s.id === S)?.endedAt === null,
    takeover: async () => {
      if (!await store.reopenSession!(S)) return false;
      if (!await store.tryAcquireCompressionLock!(S, OWN_HOLDER, HOUR)) return false;
      return await publishAndRelease();
    },
    check: () => rotatedChainTrace(store, { parent: S, child: "child-new" }),
  },
  // An append to a session rotated while the appender was stopped.
  append: {
    write: () => store.appendMessage(S, { role: "user", content: "stale append" }),
    landed: async () => (await messages()).includes("stale append"),
    takeover: async () => {
      if (!await store.tryAcquireCompressionLock!(S, OWN_HOLDER, HOUR)) return false;
      return await publishAndRelease();
    },
  },
  // A batch to a session ended while the appender was stopped.
  batchEnded: {
    write: () =>
      store.appendMessages!(S, [
        { role: "user", content: "stale batch" },
        { role: "assistant", content: "stale batch, second" },
      ]),
    landed: async () => (await messages()).includes("stale batch"),
    takeover: () => store.endSession!(S, "ended meanwhile"),
  },
  // A fork at a message rewound while the forker was stopped.
  fork: {
    write: async () => {
      const at = (await store.getMessages(S)).at(-1)!.id;
      return await marked("fork", () => store.forkSession!(S, at, "branch-stale"));
    },
    landed: async () => (await sessionIds()).includes("branch-stale"),
    takeover: async () => {
      const rows = await store.getMessages(S);
      const ids = rows.map((m) => m.id);
      return await store.rewindToMessage!(S, rows.at(-2)!.id, { expectedActiveIds: ids });
    },
  },
  // A request of a handoff another process requested and claimed meanwhile.
  request: {
    write: () => store.requestHandoff!(S, "stale request"),
    landed: () => false, // the takeover's request is refused when it landed
    takeover: async () =>
      await store.requestHandoff!(S, "new request") && await store.claimHandoff!(S),
  },
  // The claimant completes after the handoff was failed and claimed anew.
  complete: {
    acquire: () => store.claimHandoff!(S),
    write: () => store.completeHandoff!(S),
    landed: async () => await store.getHandoffState!(S) === "completed",
    takeover: async () =>
      await store.failHandoff!(S, "the claimant stalled") &&
      await store.requestHandoff!(S, "cell7") && await store.claimHandoff!(S),
    act: () => store.completeHandoff!(S),
  },
  // The claimant completes after the handoff was failed.
  completeFailed: {
    acquire: () => store.claimHandoff!(S),
    write: () => store.completeHandoff!(S),
    landed: async () => await store.getHandoffState!(S) === "completed",
    takeover: () => store.failHandoff!(S, "the claimant stalled"),
  },
  // A supervisor fails a handoff its claimant completed meanwhile.
  failCompleted: {
    prepare: () => store.claimHandoff!(S),
    write: () => store.failHandoff!(S, "given up"),
    landed: async () => await store.getHandoffState!(S) === "failed",
    takeover: () => store.completeHandoff!(S),
  },
  // The attempt's owner marks it delivered after it was settled unknown.
  delivered: {
    acquire: attemptShared,
    write: () => {
      const { id, fence } = sharedAttempt();
      return store.markDelivered!(id, fence);
    },
    landed: async () => (await store.getObligation!(sharedAttempt().id))?.state === "delivered",
    takeover: () => {
      const { id, fence } = sharedAttempt();
      return store.markUnknown!(id, fence, "the owner stalled");
    },
  },
  // A supervisor settles unknown an attempt its owner delivered meanwhile.
  unknownDelivered: {
    prepare: attemptShared,
    write: () => {
      const { id, fence } = sharedAttempt();
      return store.markUnknown!(id, fence, "given up");
    },
    landed: async () => (await store.getObligation!(sharedAttempt().id))?.state === "unknown",
    takeover: () => {
      const { id, fence } = sharedAttempt();
      return store.markDelivered!(id, fence);
    },
  },
  // A supervisor settles unknown a pending obligation its owner began to attempt meanwhile.
  unknownAttempted: {
    prepare: async () => write(shared!, await shareObligation(store)),
    write: () => {
      const { id, fence } = sharedAttempt();
      return store.markUnknown!(id, fence, "given up");
    },
    landed: async () => (await store.getObligation!(sharedAttempt().id))?.state === "unknown",
    takeover: async () => {
      const { id, fence } = sharedAttempt();
      return await store.markAttempting!(id, fence) !== null;
    },
  },
};

const plan = SCENARIOS[scenario!];
if (!plan) {
  throw new Error(`Unknown scenario "${scenario}": use ${Object.keys(SCENARIOS).join(", ")}`);
}
if (role === "actor") {
  await plan.acquire?.();
  write(`${out}.acquired`, { at: Date.now() });
  // The fork reads its message first: its marks bracket the fork alone.
  const answer = await answerOf(() =>
    scenario === "fork" ? plan.write() : marked(scenario!, plan.write)
  );
  write(out!, answer);
} else if (role === "check") {
  write(out!, { problem: await plan.check?.() ?? null });
} else {
  await plan.prepare?.();
  Deno.writeTextFileSync(`${out}.ready`, "ready");
  if (!awaitBarrier(go!, CHILD_LIFETIME_MS)) throw new Error("the new owner was never released");
  const landed = await plan.landed();
  const answer = await answerOf(() => plan.takeover());
  const took = verdict(answer) === "accepted";
  write(`${out}.took`, { took, landed });
  if (!awaitBarrier(`${go}.act`, CHILD_LIFETIME_MS)) throw new Error("no go to act");
  const acted = plan.act ? await answerOf(() => plan.act!()) : null;
  write(out!, { took, answer, landed, acted });
}
await store.close();
