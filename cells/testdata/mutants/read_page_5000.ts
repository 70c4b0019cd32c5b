/**
 * Mutant (cell 9): `getMessages` answers one page, the session's first 5,000 messages (a
 * default LIMIT, or one page of a paginated query read as the whole): every session
 * longer than that loses its later messages when it is read back to be resumed.
 *
 * @module
 */
import type { StoreOptions } from "../../contract/target.ts";
import { mutantCrashPoints, openMutant } from "./_mutant.ts";

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openMutant(path, options, ({ store }) => ({
    getMessages(sessionId: string, read?: { includeInactive?: boolean }) {
      return store.getMessages(sessionId, read).slice(0, 5_000);
    },
  }));
}

/** The crash points it honours: the reference's own (its writes are the reference's). */
export function crashPoints(): string[] {
  return mutantCrashPoints([]);
}
