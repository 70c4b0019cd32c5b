/**
 * Mutant (cell 8): the rotation names its child before it commits. `publishCompressionChild`
 * records the planned child in a table of its own, in a transaction of its own, before the
 * (atomic) publish; `resolveResumeSessionId` follows that record, so a rotator killed
 * between the two leaves every session of the chain resolving to a child that does not
 * exist.
 *
 * @module
 */
import type { StoreOptions } from "../../contract/target.ts";
import { mutantCrashPoints, openMutant } from "./_mutant.ts";
import type { SessionDB } from "../../../session_db/mod.ts";

/** A rotation as the reference store publishes it. */
type Publish = Parameters<SessionDB["publishCompressionChild"]>[0];

/** Opens the mutant. */
export function openStore(path: string, options: StoreOptions): unknown {
  return openMutant(path, options, ({ store, raw }) => {
    raw.exec(
      "CREATE TABLE IF NOT EXISTS planned_children (parent_id TEXT PRIMARY KEY, child_id TEXT NOT NULL)",
    );
    const planned = (id: string) =>
      raw.prepare("SELECT child_id FROM planned_children WHERE parent_id = ?").value<[string]>(id)
        ?.[0];
    return {
      publishCompressionChild(publish: Publish) {
        raw.transaction(() => {
          raw.prepare("INSERT OR REPLACE INTO planned_children VALUES (?, ?)").run(
            publish.parentId,
            publish.childId,
          );
        }).immediate();
        return store.publishCompressionChild(publish);
      },
      resolveResumeSessionId(sessionId: string) {
        let current = sessionId;
        for (let next = planned(current); next !== undefined; next = planned(current)) {
          current = next;
        }
        return store.resolveResumeSessionId(current);
      },
    };
  });
}

/** The crash points it honours: the reference store's (its publish runs inside). */
export function crashPoints(): string[] {
  return mutantCrashPoints([]);
}
