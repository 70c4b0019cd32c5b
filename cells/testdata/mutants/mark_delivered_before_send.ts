/**
 * Mutant (cell 5): the outbox books an obligation `delivered` when it is attempted,
 * before the send (optimistic bookkeeping), and `markDelivered` only confirms. A crash
 * between that record and the send drops the effect silently: the obligation reads
 * delivered, the receiver never saw it, and no recoverer looks at it again.
 *
 * @module
 */
import { crashPoint } from "../../../session_db/mod.ts";
import type { StoreOptions } from "../../contract/target.ts";
import { mutantCrashPoints, openMutant } from "./_mutant.ts";

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openMutant(path, options, ({ raw }) => ({
    markAttempting(id: string, expectedFence: number) {
      const changed = raw.transaction(() =>
        raw.prepare(
          `UPDATE outbox SET state = 'delivered', attempts = attempts + 1,
             delivery_fence = delivery_fence + 1, owner_pid = ?, updated_at = ?
           WHERE obligation_id = ? AND state = 'pending' AND delivery_fence = ?`,
        ).run(Deno.pid, Date.now() / 1000, id, expectedFence)
      ).immediate();
      crashPoint("markAttempting:afterCommit");
      return changed === 1 ? expectedFence + 1 : null;
    },
    markDelivered(id: string, fence: number) {
      return raw.prepare(
        "SELECT 1 FROM outbox WHERE obligation_id = ? AND state = 'delivered' AND delivery_fence = ?",
      ).value(id, fence) !== undefined;
    },
  }));
}

/** The crash points it honours (its markAttempting keeps the after-commit point). */
export function crashPoints(): string[] {
  return mutantCrashPoints(["markAttempting", "markDelivered"], ["markAttempting:afterCommit"]);
}
