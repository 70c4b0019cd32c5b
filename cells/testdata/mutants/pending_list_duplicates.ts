/**
 * Mutant (cell 12): `listPendingHandoffs` joins the sessions to their messages, so a
 * pending session is listed once per message (once when it has none).
 *
 * @module
 */
import type { StoreOptions } from "../../contract/target.ts";
import { mutantCrashPoints, openMutant } from "./_mutant.ts";

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openMutant(path, options, ({ store, raw }) => ({
    listPendingHandoffs() {
      const ids = raw.prepare(
        `SELECT s.id FROM sessions s LEFT JOIN messages m ON m.session_id = s.id
         WHERE s.handoff_state = 'pending' ORDER BY s.started_at, s.id`,
      ).values<[string]>();
      return ids.map(([id]) => store.getSession(id)!);
    },
  }));
}

/** The crash points it honours. */
export function crashPoints(): string[] {
  return mutantCrashPoints(["listPendingHandoffs"]);
}
