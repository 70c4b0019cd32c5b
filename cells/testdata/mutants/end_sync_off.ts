/**
 * Mutant (power-loss tier, cell 10): `endSession` and `reopenSession` commit with
 * `synchronous=OFF`, in one transaction each as the reference does. A SIGKILL keeps the
 * page cache, so the SIGKILL cell 10 stays GREEN; a power loss drops an acknowledged end
 * (or reopen), and the session takes appends again (or still refuses them).
 *
 * @module
 */
import { CompressionSessionClosedError, SessionNotFoundError } from "../../../session_db/mod.ts";
import type { Database } from "../../../session_db/mod.ts";
import type { StoreOptions } from "../../contract/target.ts";
import { mutantCrashPoints, openUnsyncedMutant } from "./_mutant.ts";

/** The session's end reason, refusing an unknown session with the typed error. */
function endReason(raw: Database, id: string): string | null {
  const row = raw.prepare("SELECT end_reason FROM sessions WHERE id = ?").value<[string | null]>(
    id,
  );
  if (!row) throw new SessionNotFoundError(`Unknown session "${id}"`);
  return row[0];
}

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openUnsyncedMutant(path, options, ({ raw }) => ({
    endSession: (id: string, reason: string) =>
      raw.transaction(() => {
        endReason(raw, id);
        return raw.prepare(
          "UPDATE sessions SET ended_at = ?, end_reason = ? WHERE id = ? AND ended_at IS NULL",
        ).run(Date.now() / 1000, reason, id) === 1;
      }).immediate(),
    reopenSession: (id: string) =>
      raw.transaction(() => {
        const child = raw.prepare(
          "SELECT id FROM sessions WHERE parent_session_id = ? AND branch_kind = 'continuation'",
        ).value<[string]>(id);
        if (endReason(raw, id) === "compression" && child) {
          throw new CompressionSessionClosedError(
            `Cannot reopen session "${id}": it was rotated by compression into "${child[0]}"`,
          );
        }
        return raw.prepare(
          "UPDATE sessions SET ended_at = NULL, end_reason = NULL WHERE id = ? AND ended_at IS NOT NULL",
        ).run(id) === 1;
      }).immediate(),
  }));
}

/** The crash points it honours: none in an end or a reopen. */
export function crashPoints(): string[] {
  return mutantCrashPoints(["endSession", "reopenSession"]);
}
