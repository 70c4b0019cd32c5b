/**
 * Mutant (power-loss tier, cell 5): `markDelivered` commits on a connection of its own with
 * `synchronous=OFF`, the rest being the reference store. The delivery is acknowledged
 * before it is on disk; the sender's next write (marking the next obligation attempting)
 * syncs the file, so only a power loss between the two loses an acknowledged delivery,
 * while a SIGKILL loses nothing (the page cache survives): the SIGKILL cells stay GREEN.
 *
 * @module
 */
import { crashPoint } from "../../../session_db/mod.ts";
import type { StoreOptions } from "../../contract/target.ts";
import { mutantCrashPoints, openMutant } from "./_mutant.ts";

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openMutant(path, options, ({ raw }) => {
    raw.exec("PRAGMA synchronous = OFF");
    const deliver = raw.prepare(
      `UPDATE outbox SET state = 'delivered', updated_at = ?, last_error = NULL
       WHERE obligation_id = ? AND state = 'attempting' AND delivery_fence = ?`,
    );
    return {
      markDelivered(id: string, fence: number) {
        const changed = raw.transaction(() => deliver.run(Date.now() / 1000, id, fence))
          .immediate();
        crashPoint("markDelivered:afterCommit");
        return changed === 1;
      },
    };
  });
}

/** The crash points it honours (its markDelivered keeps the after-commit point). */
export function crashPoints(): string[] {
  return mutantCrashPoints(["markDelivered"], ["markDelivered:afterCommit"]);
}
