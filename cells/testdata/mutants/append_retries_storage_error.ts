/**
 * Mutant (fault F1, a hang): the reference store whose append retries a storage failure
 * until it succeeds. On a disk that stays full it never returns: the caller hangs
 * instead of hearing that the message was not kept.
 *
 * @module
 */
import { SessionDBStorageError } from "../../../session_db/mod.ts";
import type { CellMessage, StoreOptions } from "../../contract/target.ts";
import { openMutant } from "./_mutant.ts";

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openMutant(path, options, ({ store }) => ({
    appendMessage: async (sessionId: string, message: CellMessage) => {
      for (;;) {
        try {
          return store.appendMessage(sessionId, message);
        } catch (error) {
          if (!(error instanceof SessionDBStorageError)) throw error;
          // The broken part: the full disk is waited out, forever.
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      }
    },
  }));
}
