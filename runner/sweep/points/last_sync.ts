// The power-loss variant of the crash sweep (`deno task sweep --power-loss`): the same
// states, evaluated on the last-sync image instead of the files the SIGKILLed child left.
// The crash child runs under the LD_PRELOAD file-system call recorder (watching its state
// folder); the start state is kept as the baseline; after the kill the log is replayed
// over it (recorder/crash_states.ts, profile posix) and the state where nothing unsynced
// survived at the kill (`end: synced`: each file as of its last completed sync, each name
// as of its last folder sync) is materialised. The sweep's oracle then runs on that image
// unchanged: acknowledged operations present with their results (durability), the
// interrupted one absent or complete, kept when the point is after COMMIT, invariants and
// integrity.
//
// Before imaging, the replayed log must reproduce the database files on disk byte for
// byte: the crash points fire between statements, so the recorder cannot have missed a
// write, and a recording that differs would make the image meaningless.
import { basename, dirname, join } from "node:path";
import { buildRecorder } from "../../../recorder/build.ts";
import { killEnd, powerLossStates } from "../../../recorder/crash_states.ts";
import { type FileSet, firstDifference, readFolder, writeImage } from "../../../recorder/image.ts";
import { judgeableLog, readLog } from "../../../recorder/log.ts";
import { besideFolder } from "../../../harness/evidence.ts";
import { HarnessError } from "../../../harness/harness_error.ts";
import { denoCacheDir, recorderEnv } from "../../../recorder/record.ts";
import type { CrashImage, CrashImageResult } from "../core/types.ts";

const LOG = "fs.log";
const BASELINE = "baseline";
const IMAGE = "last-sync";

/** The database's own files in a folder: the file, its journal and its WAL. */
function databaseFiles(files: FileSet, db: string): FileSet {
  const name = basename(db);
  return new Map(
    [...files].filter(([file]) => [name, `${name}-journal`, `${name}-wal`].includes(file)),
  );
}

/**
 * The last-sync image as the sweep's crash image.
 *
 * @returns The hook for `SweepOptions.crashImage`.
 * @throws {Error} When the recorder cannot run here (not Linux/glibc, no `cc`).
 */
export async function lastSyncImage(): Promise<CrashImage> {
  const built = await buildRecorder();
  if (!built.ok) throw new Error(`Cannot sweep with --power-loss: ${built.reason}`);
  return {
    name: "last-sync image (power loss, recorder)",
    flag: "--power-loss",
    // The state folder the hooks get is the store's: the run's journals are beside it.
    childEnv: (stateDir) =>
      recorderEnv({
        library: built.path,
        watched: stateDir,
        log: besideFolder(stateDir, LOG),
        data: true,
        ignore: [denoCacheDir(), dirname(stateDir)],
      }),
    beforeChild(stateDir, db) {
      // The baseline is the start state as the sweep put it in place (treated as durable).
      writeImage(databaseFiles(readFolder(dirname(db)), db), besideFolder(stateDir, BASELINE));
    },
    image(stateDir, db): CrashImageResult {
      const log = judgeableLog(readLog(besideFolder(stateDir, LOG)), stateDir);
      const baseline = readFolder(besideFolder(stateDir, BASELINE));
      const relative = (files: FileSet) => databaseFiles(files, db);
      const full = killEnd(log, baseline).files;
      const disk = databaseFiles(readFolder(dirname(db)), db);
      const mismatch = firstDifference(relative(full), disk);
      if (mismatch) {
        // The recorder missed a call: the suite cannot judge the state (an ERROR).
        throw new HarnessError(
          `the replayed log (${log.records.length} records) differs from the files on disk: ${mismatch} (the recorder missed a call; keep ${stateDir} and report it)`,
        );
      }
      const synced = powerLossStates(log, { profile: "posix", baseline, lastInstants: 1 }).next();
      const image = relative(synced.done ? full : synced.value.files);
      const dir = besideFolder(stateDir, IMAGE);
      writeImage(image, dir);
      return {
        db: join(dir, basename(db)),
        differs: firstDifference(image, relative(full)) !== null,
      };
    },
  };
}
