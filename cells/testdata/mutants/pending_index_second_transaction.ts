/**
 * Mutant (cell 12): `listPendingHandoffs` reads a side index of pending handoffs that each
 * request, claim and failure updates in a second transaction after its own: a process killed
 * between the two leaves a pending handoff unlisted (or a claimed one listed).
 *
 * @module
 */
import type { StoreOptions } from "../../contract/target.ts";
import { mutantCrashPoints, openMutant } from "./_mutant.ts";

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openMutant(path, options, ({ store, raw }) => {
    raw.exec("CREATE TABLE IF NOT EXISTS pending_index (session_id TEXT PRIMARY KEY)");
    const index = (sessionId: string, pending: boolean) =>
      raw.prepare(
        pending
          ? "INSERT OR IGNORE INTO pending_index (session_id) VALUES (?)"
          : "DELETE FROM pending_index WHERE session_id = ?",
      ).run(sessionId);
    return {
      requestHandoff(sessionId: string, platform: string) {
        const done = store.requestHandoff(sessionId, platform);
        if (done) index(sessionId, true);
        return done;
      },
      claimHandoff(sessionId: string) {
        const done = store.claimHandoff(sessionId);
        if (done) index(sessionId, false);
        return done;
      },
      failHandoff(sessionId: string, error: string) {
        const done = store.failHandoff(sessionId, error);
        if (done) index(sessionId, false);
        return done;
      },
      listPendingHandoffs() {
        const ids = raw.prepare(
          `SELECT s.id FROM pending_index p JOIN sessions s ON s.id = p.session_id
           ORDER BY s.started_at, s.id`,
        ).values<[string]>();
        return ids.map(([id]) => store.getSession(id)!);
      },
    };
  });
}

/** The crash points it honours. */
export function crashPoints(): string[] {
  return mutantCrashPoints(["requestHandoff", "claimHandoff", "failHandoff"]);
}
