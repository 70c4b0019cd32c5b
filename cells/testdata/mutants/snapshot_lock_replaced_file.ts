/**
 * Mutant (concurrent writers): the JSON snapshot store (`../snapshot_store/target.ts`) that
 * locks the snapshot file itself, which each save replaces by rename. A writer that opened
 * the old file still gets its lock while another holds the lock of the new one: both read,
 * both save, and one's acknowledged message is lost. Not SQLite: the default leg only.
 *
 * @module
 */
import { SnapshotStore } from "../snapshot_store/snapshot_store.ts";

/** Opens the mutant. */
export function openStore(path: string): SnapshotStore {
  return SnapshotStore.open(path, { lock: "snapshot" });
}
