/**
 * Mutant (power-loss tier, cell 9): `appendMessages` commits each batch in one transaction
 * with `synchronous=OFF`. A SIGKILL keeps the page cache, so the SIGKILL cell 9 stays
 * GREEN (every batch whole, every acknowledged one there); a power loss loses acknowledged
 * batches (and in a rollback journal may leave part of one).
 *
 * @module
 */
import type { StoreOptions } from "../../contract/target.ts";
import {
  insertAppend,
  mutantCrashPoints,
  openUnsyncedMutant,
  refuseUnwritable,
} from "./_mutant.ts";

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openUnsyncedMutant(path, options, ({ raw }) => ({
    appendMessages(sessionId: string, messages: { role: string; content: string }[]) {
      return raw.transaction(() => {
        refuseUnwritable(raw, sessionId);
        return messages.map((message) => insertAppend(raw, sessionId, message));
      }).immediate();
    },
  }));
}

/** The crash points it honours: none inside a batch. */
export function crashPoints(): string[] {
  return mutantCrashPoints(["appendMessages"]);
}
