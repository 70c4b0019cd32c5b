// The durability patterns a power-loss run's recorder log shows, read from the calls
// themselves (never from a message): at some acknowledgement, a write to the store's files
// not yet synced (`unsynced-ack-power-loss`: synchronous=NORMAL in WAL mode, or OFF), a
// rollback journal unlinked with no sync of its folder since (`delete-full-power-loss`:
// DELETE mode below synchronous=EXTRA), or a store file created or renamed into place with
// no sync of its folder since (`unsynced-name-power-loss`). A power-loss check that fails
// attaches it.
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
 * journal unlinked without a folder sync before an acknowledgement; then one of those
 * files made (an open that created it, a rename onto it) without a folder sync before one.
 *
 * @param log The run's recorder log (acknowledgements are its `mark` records).
 * @param db The database file the store was given.
 * @returns The pattern, or `undefined` when the log shows none.
 */
export function powerLossPattern(log: RecorderLog, db: string): PatternId | undefined {
  const folder = folderOf(db);
  const journal = `${db}-journal`;
  const files = new Set([db, `${db}-wal`, journal]);
  const handles = new Map<number, string>();
  // A write through an O_DSYNC or O_SYNC handle is synced when it returns.
  const synchronous = new Set<number>();
  const dirty = new Set<string>();
  const unsyncedNames = new Set<string>();
  let unlinkedUnsynced = false;
  const seen = { unsyncedAck: false, deleteAck: false, nameAck: false };
  for (const record of log.records) {
    if (record.failed) continue;
    const path = record.handle ? handles.get(record.handle) ?? record.path : record.path;
    switch (record.kind) {
      case "open":
        handles.set(record.handle, record.path);
        if (opensSynchronously(record)) synchronous.add(record.handle);
        if (record.extra === 1 && files.has(record.path)) unsyncedNames.add(record.path);
        break;
      case "write":
      case "truncate":
      case "fallocate":
        if (files.has(path) && !writesSynchronously(record, synchronous)) dirty.add(path);
        break;
      case "rename":
        if (files.has(record.path2)) unsyncedNames.add(record.path2);
        break;
      case "sync":
        if (record.extra === SYNC_FILE_RANGE) break;
        if (path === folder) {
          unlinkedUnsynced = false;
          unsyncedNames.clear();
        } else dirty.delete(path);
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
        if (dirty.size) seen.unsyncedAck = true;
        if (unlinkedUnsynced) seen.deleteAck = true;
        if (unsyncedNames.has(db)) seen.nameAck = true;
        break;
    }
  }
  if (seen.unsyncedAck) return "unsynced-ack-power-loss";
  if (seen.deleteAck) return "delete-full-power-loss";
  if (seen.nameAck) return "unsynced-name-power-loss";
  return undefined;
}
