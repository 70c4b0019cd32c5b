/**
 * Test target: the reference store with only the core methods (`createSession`,
 * `appendMessage`, `getMessages`, `close`). Cell 1 runs; cells 2 to 5 must be SKIPPED,
 * each naming the methods it lacks.
 *
 * @module
 */
import { SessionDB } from "../../session_db/mod.ts";
import type { Store, StoreOptions } from "../contract/target.ts";

/** Opens the store: the core methods only. */
export function openStore(path: string, options: StoreOptions): Store {
  const db = SessionDB.open(path, options.journalMode ? { journalMode: options.journalMode } : {});
  return {
    createSession: (id) => db.createSession(id),
    appendMessage: (sessionId, message) => db.appendMessage(sessionId, message),
    getMessages: (sessionId, read) => db.getMessages(sessionId, read),
    close: () => db.close(),
  };
}
