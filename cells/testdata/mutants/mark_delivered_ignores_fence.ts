/**
 * Mutant (cell 7): `markDelivered` marks by id only, ignoring the fence and the state:
 * an owner that stalled while another process settled its attempt still books it
 * delivered, over the new owner's mark.
 *
 * @module
 */
import type { StoreOptions } from "../../contract/target.ts";
import { mutantCrashPoints, openMutant } from "./_mutant.ts";

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openMutant(path, options, ({ raw }) => ({
    markDelivered(id: string, _fence: number) {
      return raw.prepare(
        "UPDATE outbox SET state = 'delivered', last_error = NULL, updated_at = ? WHERE obligation_id = ?",
      ).run(Date.now() / 1000, id) === 1;
    },
  }));
}

/** The crash points it honours. */
export function crashPoints(): string[] {
  return mutantCrashPoints(["markDelivered"]);
}
