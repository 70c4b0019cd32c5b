// The durability patterns a power-loss run's recorder log shows, read from the calls
// themselves (never from a message): at some acknowledgement, a write to the store's files
// not yet synced (`unsynced-ack-power-loss`: synchronous=NORMAL in WAL mode, or OFF), or a
// rollback journal unlinked with no sync of its folder since (`delete-full-power-loss`:
// DELETE mode below synchronous=EXTRA). A power-loss check that fails attaches it.
import type { RecorderLog } from "../../recorder/log.ts";
import type { PatternId } from "../engine/diagnoses.ts";

/** `sync_file_range` (the sync form of a `sync` record's `extra`): guarantees nothing. */
const SYNC_FILE_RANGE = 2;

function folderOf(path: string): string {
  return path.slice(0, path.lastIndexOf("/")) || "/";
}

/**
 * The pattern the log shows at an acknowledgement, if any: a write to the database, its
 * WAL or its journal not synced when an acknowledgement was journaled comes first; else a
 * journal unlinked without a folder sync before an acknowledgement.
 *
 * @param log The run's recorder log (acknowledgements are its `mark` records).
 * @param db The database file the store was given.
 * @returns The pattern, or `undefined` when the log shows neither.
 */
export function powerLossPattern(log: RecorderLog, db: string): PatternId | undefined {
  const folder = folderOf(db);
  const journal = `${db}-journal`;
  const files = new Set([db, `${db}-wal`, journal]);
  const handles = new Map<number, string>();
  const dirty = new Set<string>();
  let unlinkedUnsynced = false;
  let unsyncedAck = false;
  let deleteAck = false;
  for (const record of log.records) {
    if (record.failed) continue;
    const path = record.handle ? handles.get(record.handle) ?? record.path : record.path;
    switch (record.kind) {
      case "open":
        handles.set(record.handle, record.path);
        break;
      case "write":
      case "truncate":
      case "fallocate":
        if (files.has(path)) dirty.add(path);
        break;
      case "sync":
        if (record.extra === SYNC_FILE_RANGE) break;
        if (path === folder) unlinkedUnsynced = false;
        else dirty.delete(path);
        break;
      case "syncAll":
        dirty.clear();
        unlinkedUnsynced = false;
        break;
      case "unlink":
        dirty.delete(record.path);
        if (record.path === journal) unlinkedUnsynced = true;
        break;
      case "mark":
        if (dirty.size) unsyncedAck = true;
        if (unlinkedUnsynced) deleteAck = true;
        break;
    }
  }
  if (unsyncedAck) return "unsynced-ack-power-loss";
  if (deleteAck) return "delete-full-power-loss";
  return undefined;
}
