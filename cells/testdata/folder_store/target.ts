/**
 * Test target: the folder store (its path a folder of segment files), correct.
 *
 * @module
 */
import { FolderStore } from "./folder_store.ts";

/** Opens the store. */
export function openStore(path: string): FolderStore {
  return FolderStore.open(path);
}
