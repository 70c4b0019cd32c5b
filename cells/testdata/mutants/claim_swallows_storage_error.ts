/**
 * Mutant (fault F1, the sweep's programs): the reference store whose handoff claim
 * swallows a storage failure (a full disk, an I/O error) and answers that the claim was
 * won. The claim's transaction was rolled back, so the handoff is still parked and a
 * second process claims it too. F1's own program never claims: only the sweep's
 * programs under faults reach it.
 *
 * @module
 */
import { SessionDBStorageError } from "../../../session_db/mod.ts";
import type { StoreOptions } from "../../contract/target.ts";
import { openMutant } from "./_mutant.ts";

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openMutant(path, options, ({ store }) => ({
    claimHandoff: (sessionId: string) => {
      try {
        return store.claimHandoff(sessionId);
      } catch (error) {
        if (!(error instanceof SessionDBStorageError)) throw error;
        return true; // the broken part: a claim that was never written is reported won
      }
    },
  }));
}
