/**
 * Test target: the reference store without the delivery outbox (no `recordObligation`,
 * `markAttempting`, `markDelivered`, `sweepRecoverable`, `listObligations`, …). Cell 5
 * must be SKIPPED with a reason naming the missing methods; cells 1 to 4 still run.
 *
 * @module
 */
import { SessionDB } from "../../session_db/mod.ts";
import type { Store, StoreOptions } from "../contract/target.ts";

/** Opens the store: every method of the reference store but the outbox's. */
export function openStore(path: string, options: StoreOptions): Store {
  const db = SessionDB.open(path, options.journalMode ? { journalMode: options.journalMode } : {});
  return {
    createSession: (id) => db.createSession(id),
    appendMessage: (sessionId, message) => db.appendMessage(sessionId, message),
    getMessages: (sessionId, read) => db.getMessages(sessionId, read),
    close: () => db.close(),
    checkInvariants: () => db.checkInvariants(),
    requestHandoff: (sessionId, platform) => db.requestHandoff(sessionId, platform),
    claimHandoff: (sessionId) => db.claimHandoff(sessionId),
    getHandoffState: (sessionId) => db.getHandoffState(sessionId),
    getSession: (id) => db.getSession(id),
    listSessions: () => db.listSessions(),
    tryAcquireCompressionLock: (sessionId, holder, ttlMs) =>
      db.tryAcquireCompressionLock(sessionId, holder, ttlMs),
    publishCompressionChild: (publish) => db.publishCompressionChild(publish),
    releaseCompressionLock: (sessionId, holder) => db.releaseCompressionLock(sessionId, holder),
    rewindToMessage: (sessionId, targetId, rewind) =>
      db.rewindToMessage(sessionId, targetId, rewind),
    forkSession: (sessionId, atMessageId, newId) => db.forkSession(sessionId, atMessageId, newId),
  };
}
