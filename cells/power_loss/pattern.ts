// The durability patterns a power-loss run's recorder log shows, read from the calls
// themselves (never from a message): at some acknowledgement, a write to the store's files
// not yet synced (`unsynced-ack-power-loss`: synchronous=NORMAL in WAL mode, or OFF), a
// file renamed onto the store's before its data was synced (`unsynced-rename-power-loss`),
// a rollback journal unlinked with no sync of its folder since (`delete-full-power-loss`:
// DELETE mode below synchronous=EXTRA), or a store file created or renamed into place with
// no sync of its folder since (`unsynced-name-power-loss`; for a store that makes its path
// a folder, the files and folders in it too). A power-loss check that fails attaches it.
import { opensSynchronously, type RecorderLog, writesSynchronously } from "../../recorder/log.ts";
import type { PatternId } from "../engine/diagnoses.ts";

/** `sync_file_range` (the sync form of a `sync` record's `extra`): guarantees nothing. */
const SYNC_FILE_RANGE = 2;

function folderOf(path: string): string {
  return path.slice(0, path.lastIndexOf("/")) || "/";
}

/**
 * The pattern the log shows at an acknowledgement, if any: a write to the database, its
 * WAL or its journal not synced when an acknowledgement was journaled comes first; then a
 * file renamed onto one of them with writes not synced; then a journal unlinked without a
 * folder sync before an acknowledgement; then one of those files made (an open that
 * created it, a rename onto it) without a folder sync before one.
 *
 * @param log The run's recorder log (acknowledgements are its `mark` records).
 * @param db The database file the store was given.
 * @returns The pattern, or `undefined` when the log shows none.
 */
export function powerLossPattern(log: RecorderLog, db: string): PatternId | undefined {
  const journal = `${db}-journal`;
  const beside = new Set([db, `${db}-wal`, journal]);
  // A store may make its path a folder of its own files (a LevelDB-like layout).
  const isStoreFile = (path: string) => beside.has(path) || path.startsWith(`${db}/`);
  const holdsData = (name: string) => name === db || name.startsWith(`${db}/`);
  const handles = new Map<number, string>();
  // A write through an O_DSYNC or O_SYNC handle is synced when it returns.
  const synchronous = new Set<number>();
  // Every file with writes not synced: a store may write a file elsewhere and rename it
  // onto its own.
  const dirty = new Set<string>();
  const unsyncedNames = new Set<string>();
  let unlinkedUnsynced = false;
  const seen = { unsyncedAck: false, renameDirty: false, deleteAck: false, nameAck: false };
  for (const record of log.records) {
    if (record.failed) continue;
    const path = record.handle ? handles.get(record.handle) ?? record.path : record.path;
    switch (record.kind) {
      case "open":
        handles.set(record.handle, record.path);
        if (opensSynchronously(record)) synchronous.add(record.handle);
        if (record.extra === 1 && isStoreFile(record.path)) unsyncedNames.add(record.path);
        break;
      case "write":
      case "truncate":
      case "fallocate":
        if (!writesSynchronously(record, synchronous)) dirty.add(path);
        break;
      case "rename":
        renamed(handles, record.path, record.path2);
        dirty.delete(record.path2);
        if (dirty.delete(record.path)) {
          dirty.add(record.path2);
          // The new name can reach the disk before the data it names (ext4's zero-length files).
          if (isStoreFile(record.path2)) seen.renameDirty = true;
        }
        if (isStoreFile(record.path2)) unsyncedNames.add(record.path2);
        break;
      case "mkdir":
        if (holdsData(record.path)) unsyncedNames.add(record.path);
        break;
      case "sync":
        if (record.extra === SYNC_FILE_RANGE) break;
        // A sync of a folder makes the names in it durable; of a file, its writes.
        if (path === folderOf(db)) unlinkedUnsynced = false;
        for (const name of unsyncedNames) if (folderOf(name) === path) unsyncedNames.delete(name);
        dirty.delete(path);
        break;
      case "syncAll":
        dirty.clear();
        unsyncedNames.clear();
        unlinkedUnsynced = false;
        break;
      case "unlink":
        dirty.delete(record.path);
        unsyncedNames.delete(record.path);
        if (record.path === journal) unlinkedUnsynced = true;
        break;
      case "mark":
        if ([...dirty].some(isStoreFile)) seen.unsyncedAck = true;
        if (unlinkedUnsynced) seen.deleteAck = true;
        if ([...unsyncedNames].some(holdsData)) seen.nameAck = true;
        break;
    }
  }
  if (seen.renameDirty) return "unsynced-rename-power-loss";
  if (seen.unsyncedAck) return "unsynced-ack-power-loss";
  if (seen.deleteAck) return "delete-full-power-loss";
  if (seen.nameAck) return "unsynced-name-power-loss";
  return undefined;
}

/** Points the handles open on `from` at `to`: they name the renamed file. */
function renamed(handles: Map<number, string>, from: string, to: string): void {
  for (const [handle, path] of handles) if (path === from) handles.set(handle, to);
}
