// Cell 8's reads and probes of a recovered file from the test process, each through a
// fresh open of the target's store: the sessions and messages, the orphan recovery, the
// dead rotator's lock, the appends to ended parents, one process's resolution view.
import type { StoredSession } from "../contract/target.ts";
import { invariantsOf, sortedSessions, withStore } from "../contract/with_store.ts";
import { answerOf } from "../contract/typed.ts";
import { LOCK_TTL_MS } from "../rotation_atomicity/children/lock_taker.ts";
import { orphans } from "../rotation_atomicity/judge.ts";
import { type ResolutionView, resolutionView } from "./_chain.ts";
import type { EndedAppend, MessageRow, ReopenCall } from "./judge.ts";

/** A recovered file as the store reads it back. */
export interface ChainState {
  /** Every session, by id. */
  sessions: StoredSession[];
  /** Every session's active messages. */
  messages: Record<string, MessageRow[]>;
  /** The store's invariant violations (`[]` without `checkInvariants`). */
  invariants: string[];
}

/** Reads every session and its messages (and the invariants), writing nothing. */
export function readState(target: string, db: string): Promise<ChainState> {
  return withStore(target, db, async (store) => {
    const sessions = await sortedSessions(store);
    const messages: Record<string, MessageRow[]> = {};
    for (const s of sessions) {
      messages[s.id] = (await store.getMessages(s.id)).map((m) => ({
        id: m.id,
        content: m.content,
      }));
    }
    return { sessions, messages, invariants: await invariantsOf(store) };
  });
}

/**
 * The orphan recovery a client runs when the store offers it: `reopenOrphanedCompressionSession`
 * on every session ended by compression (the orphans to reopen, and those with a published
 * continuation, which must be refused). `undefined` when the store has no such method.
 */
export function reopenOrphans(
  target: string,
  db: string,
  sessions: readonly StoredSession[],
): Promise<ReopenCall[] | undefined> {
  const lonely = new Set(orphans(sessions));
  return withStore(target, db, async (store) => {
    if (!store.reopenOrphanedCompressionSession) return undefined;
    const calls: ReopenCall[] = [];
    for (const s of sessions.filter((s) => s.endReason === "compression")) {
      const answer = await answerOf(() => store.reopenOrphanedCompressionSession!(s.id));
      calls.push({ id: s.id, orphan: lonely.has(s.id), answer });
    }
    return calls;
  });
}

/**
 * Another (live) holder takes the compression lock of `sessionId` in one attempt, then
 * releases it: whatever dead holder had it, the lock must be free at once.
 *
 * @returns Whether the lock was taken, and how long the attempt took.
 */
export function takeLock(
  target: string,
  db: string,
  sessionId: string,
): Promise<{ taken: unknown; tookMs: number }> {
  return withStore(target, db, async (store) => {
    const holder = `cell8-prober:pid=${Deno.pid}`;
    const started = performance.now();
    const taken = await answerOf(() =>
      store.tryAcquireCompressionLock!(sessionId, holder, LOCK_TTL_MS)
    );
    const tookMs = Math.round(performance.now() - started);
    if (taken.value === true) await store.releaseCompressionLock!(sessionId, holder);
    return { taken: taken.threw ? `threw ${taken.name}: ${taken.message}` : taken.value, tookMs };
  });
}

/** Appends to each ended parent (each must be refused), reading its messages around it. */
export function probeEndedAppends(
  target: string,
  db: string,
  parents: readonly string[],
): Promise<EndedAppend[]> {
  return withStore(target, db, async (store) => {
    const read = async (id: string) =>
      (await store.getMessages(id)).map((m) => ({ id: m.id, content: m.content }));
    const probes: EndedAppend[] = [];
    for (const id of parents) {
      const before = await read(id);
      const answer = await answerOf(() =>
        store.appendMessage(id, { role: "user", content: "after its rotation" })
      );
      probes.push({ id, answer, before, after: await read(id) });
    }
    return probes;
  });
}

/** This process's view of how `ids` resolve, through a fresh open. */
export function viewHere(
  target: string,
  db: string,
  ids: readonly string[],
): Promise<ResolutionView> {
  return withStore(target, db, (store) => resolutionView(store, ids));
}
