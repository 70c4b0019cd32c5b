/**
 * Mutant (cell 1): `getMessages` answers from a cache of its own process, filled at a
 * session's first read and kept up to date with this process's appends only: a process that
 * read a session before never reads another process's acknowledged appends to it.
 *
 * @module
 */
import type { NewMessage, SessionDB } from "../../../session_db/mod.ts";
import type { StoreOptions } from "../../contract/target.ts";
import { mutantCrashPoints, openMutant } from "./_mutant.ts";

type Read = ReturnType<SessionDB["getMessages"]>;

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  const cache = new Map<string, Read>();
  return openMutant(path, options, ({ store }) => ({
    getMessages(sessionId: string, options?: { includeInactive?: boolean }) {
      if (options?.includeInactive) return store.getMessages(sessionId, options);
      if (!cache.has(sessionId)) cache.set(sessionId, store.getMessages(sessionId));
      return cache.get(sessionId)!.map((message) => ({ ...message }));
    },
    appendMessage(sessionId: string, message: NewMessage) {
      const id = store.appendMessage(sessionId, message);
      const appended = store.getMessages(sessionId).find((m) => m.id === id);
      if (appended) cache.get(sessionId)?.push(appended);
      return id;
    },
  }));
}

/** The crash points it honours: the reference's own, which its appends still make. */
export function crashPoints(): string[] {
  return mutantCrashPoints([]);
}
