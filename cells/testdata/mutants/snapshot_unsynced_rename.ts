/**
 * Mutant (power loss): the JSON snapshot store (`../snapshot_store/target.ts`) that renames
 * its temporary file into place without syncing it first. The folder sync after the rename
 * makes the new name durable before the data it names: a power loss leaves the snapshot
 * empty or torn, and every acknowledged message with it. A SIGKILL keeps the page cache, so
 * no crash cell sees it. Not SQLite: the default leg only.
 *
 * @module
 */
import { SnapshotStore } from "../snapshot_store/snapshot_store.ts";

/** Opens the mutant. */
export function openStore(path: string): SnapshotStore {
  return SnapshotStore.open(path, { syncData: false });
}
