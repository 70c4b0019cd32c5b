/**
 * Mutant (cell 5): takes an obligation whose content equals one already recorded for the
 * session, for another message, for a retry of it (a unique key on the content, a hash of it):
 * it answers the earlier obligation and records nothing, so an effect an agent sent twice is
 * delivered once.
 *
 * @module
 */
import type { StoreOptions } from "../../contract/target.ts";
import { mutantCrashPoints, openMutant } from "./_mutant.ts";

type Recorded = { sessionId: string; messageRef: string; content: string };

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openMutant(path, options, ({ store, raw }) => ({
    recordObligation(obligation: Recorded) {
      const same = raw.prepare(
        "SELECT obligation_id AS id FROM outbox WHERE session_id = ? AND content = ?",
      ).get<{ id: string }>(obligation.sessionId, obligation.content);
      return same ? store.getObligation(same.id) : store.recordObligation(obligation);
    },
  }));
}

/** The crash points it honours: the reference's own, which its recordings still make. */
export function crashPoints(): string[] {
  return mutantCrashPoints([]);
}
