/**
 * Mutant (power-loss tier, cell 12): `requestHandoff` and `claimHandoff` commit with
 * `synchronous=OFF`, in one transaction each as the reference does. A SIGKILL keeps the
 * page cache, so the SIGKILL cell 12 stays GREEN; a power loss drops an acknowledged
 * request (no longer listed) or claim (listed again).
 *
 * @module
 */
import { SessionNotFoundError } from "../../../session_db/mod.ts";
import type { StoreOptions } from "../../contract/target.ts";
import { mutantCrashPoints, openUnsyncedMutant } from "./_mutant.ts";

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openUnsyncedMutant(path, options, ({ raw }) => ({
    requestHandoff: (sessionId: string, platform: string) =>
      raw.transaction(() => {
        if (!raw.prepare("SELECT 1 FROM sessions WHERE id = ?").value(sessionId)) {
          throw new SessionNotFoundError(`Unknown session "${sessionId}"`);
        }
        return raw.prepare(
          `UPDATE sessions SET handoff_state = 'pending', handoff_platform = ?, handoff_error = NULL
           WHERE id = ? AND (handoff_state IS NULL OR handoff_state IN ('completed', 'failed'))`,
        ).run(platform, sessionId) === 1;
      }).immediate(),
    claimHandoff: (sessionId: string) =>
      raw.transaction(() =>
        raw.prepare(
          `UPDATE sessions SET handoff_state = 'running', handoff_owner_pid = ?
           WHERE id = ? AND handoff_state = 'pending'`,
        ).run(Deno.pid, sessionId) === 1
      ).immediate(),
  }));
}

/** The crash points it honours: none in a request or a claim. */
export function crashPoints(): string[] {
  return mutantCrashPoints(["requestHandoff", "claimHandoff"]);
}
