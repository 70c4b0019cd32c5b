// The power-loss variant of the crash sweep (`deno task sweep --power-loss`): the same
// states, evaluated on the last-sync image instead of the files the SIGKILLed child left.
// The crash child runs with the recording VFS preloaded (cells/recorded_child.ts); the
// start state is kept as the baseline; after the kill the log is replayed over it
// (session_db/crash_states.ts) and each file is materialised as of its last completed
// sync, an unlink only once a folder sync made it durable. The sweep's oracle then runs
// on that image unchanged: acknowledged operations present with their results
// (durability), the interrupted one absent or complete, kept when the point is after
// COMMIT, invariants and integrity.
//
// Before imaging, the replayed log must reproduce the files on disk byte for byte (the
// full image): the crash points fire between statements, so the recorder cannot have
// missed a write, and a recording that differs would make the image meaningless.
import { basename, dirname, join } from "node:path";
import { spawnRecordedChild } from "../../cells/recorded_child.ts";
import {
  CrashModel,
  type FileSet,
  materialise,
  readVfsLog,
  snapshotFolder,
} from "../../session_db/crash_states.ts";
import type { CrashImage, CrashImageResult } from "./_types.ts";

const LOG = "vfs.log";
const BASELINE = "baseline";
const IMAGE = "last-sync";

/** The database's own files in a folder: the file, its journal and its WAL. */
function databaseFiles(files: FileSet, db: string): FileSet {
  const name = basename(db);
  return new Map(
    [...files].filter(([file]) => [name, `${name}-journal`, `${name}-wal`].includes(file)),
  );
}

function differs(a: FileSet, b: FileSet): string | null {
  for (const name of [...new Set([...a.keys(), ...b.keys()])].sort()) {
    const x = a.get(name);
    const y = b.get(name);
    if (!x || !y) return `${name} is ${x ? "in the replay only" : "on disk only"}`;
    if (x.length !== y.length) return `${name}: replay ${x.length} bytes, disk ${y.length}`;
    const at = x.findIndex((byte, i) => byte !== y[i]);
    if (at !== -1) return `${name}: first difference at byte ${at}`;
  }
  return null;
}

/**
 * The last-sync image as the sweep's crash image.
 *
 * @returns The hook for `SweepOptions.crashImage`.
 */
export function lastSyncImage(): CrashImage {
  return {
    name: "last-sync image (power loss)",
    flag: "--power-loss",
    spawn: (options) => spawnRecordedChild(options, join(options.runDir, LOG)),
    beforeChild(stateDir, db) {
      // The baseline is the start state as the sweep put it in place (treated as durable).
      materialise(databaseFiles(snapshotFolder(dirname(db)), db), join(stateDir, BASELINE));
    },
    image(stateDir, db): CrashImageResult {
      const folder = dirname(db);
      const baseline = snapshotFolder(join(stateDir, BASELINE));
      const log = readVfsLog(join(stateDir, LOG));
      const model = new CrashModel(baseline, log.records, folder);
      const full = databaseFiles(model.fullImage(), db);
      const disk = databaseFiles(snapshotFolder(folder), db);
      const mismatch = differs(full, disk);
      if (mismatch) {
        throw new Error(
          `the replayed VFS log (${log.records.length} records) differs from the files on disk: ${mismatch} (the recorder missed an operation; keep ${stateDir} and report it)`,
        );
      }
      const image = databaseFiles(model.lastSyncImage(), db);
      const dir = materialise(image, join(stateDir, IMAGE));
      return { db: join(dir, basename(db)), differs: differs(image, full) !== null };
    },
  };
}
