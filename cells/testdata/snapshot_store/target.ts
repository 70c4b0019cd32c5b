/**
 * Test target: the JSON snapshot store replaced by rename on every change, correct (the
 * temporary file synced before its rename, the folder synced after it).
 *
 * @module
 */
import { SnapshotStore } from "./snapshot_store.ts";

/** Opens the store. */
export function openStore(path: string): SnapshotStore {
  return SnapshotStore.open(path);
}
