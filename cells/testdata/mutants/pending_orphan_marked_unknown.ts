/**
 * Mutant (cell 5), a store written elsewhere: recovery books every obligation of a dead
 * process `unknown` (with a reason), even one still `pending` that was never attempted
 * and so cannot have been sent: it is never delivered. It declares no crash points.
 *
 * @module
 */
import { processAlive } from "../../../session_db/process.ts";
import type { StoreOptions } from "../../contract/target.ts";
import { openMutant } from "./_mutant.ts";

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openMutant(path, options, ({ store, raw }) => ({
    sweepRecoverable(sweep: { idempotentTransport?: boolean } = {}) {
      raw.transaction(() => {
        const orphans = raw.prepare(
          "SELECT obligation_id, owner_pid FROM outbox WHERE state = 'pending'",
        ).all<{ obligation_id: string; owner_pid: number }>();
        for (const orphan of orphans) {
          if (orphan.owner_pid === Deno.pid || processAlive(orphan.owner_pid)) continue;
          raw.prepare(
            `UPDATE outbox SET state = 'unknown', last_error = 'orphaned by a dead process'
             WHERE obligation_id = ? AND state = 'pending'`,
          ).run(orphan.obligation_id);
        }
      }).immediate();
      return store.sweepRecoverable(sweep);
    },
  }));
}
