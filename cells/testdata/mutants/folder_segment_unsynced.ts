/**
 * Mutant (power loss): the folder store (`../folder_store/target.ts`) that never syncs its
 * folder after making a new segment. Each line is synced, but a new segment's name is not:
 * a power loss before anything else syncs the folder loses the segment with its
 * acknowledged lines. A SIGKILL keeps the name, so no crash cell sees it. Not SQLite: the
 * default leg only.
 *
 * @module
 */
import { FolderStore } from "../folder_store/folder_store.ts";

/** Opens the mutant. */
export function openStore(path: string): FolderStore {
  return FolderStore.open(path, { syncNewSegment: false });
}
