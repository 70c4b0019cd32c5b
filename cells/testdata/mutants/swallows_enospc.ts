/**
 * Mutant (fault F1, injected errors): the reference store whose appends swallow a storage
 * failure (a full disk, an I/O error) and return an id as if the message were kept. The
 * transaction was rolled back, so the acknowledged message is nowhere. No crash shows it:
 * only a failed write does.
 *
 * @module
 */
import { SessionDBStorageError } from "../../../session_db/mod.ts";
import type { CellMessage, StoreOptions } from "../../contract/target.ts";
import { openMutant } from "./_mutant.ts";

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  let last = 0;
  return openMutant(path, options, ({ store }) => ({
    appendMessage: (sessionId: string, message: CellMessage) => {
      try {
        last = store.appendMessage(sessionId, message);
      } catch (error) {
        if (!(error instanceof SessionDBStorageError)) throw error;
        last += 1; // the broken part: the failure is swallowed and an id made up
      }
      return last;
    },
  }));
}
