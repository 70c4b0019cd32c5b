/**
 * The file-system call recorder for any store: an `LD_PRELOAD` object
 * (`fs_recorder.c`, built by {@linkcode buildRecorder}) records a child's calls on one
 * folder ({@linkcode recorderEnv}), kills it before the k-th or fails the k-th of a kind
 * (an injected fault, {@linkcode injectedFaults}); the log
 * ({@linkcode readLog}) yields SIGKILL states ({@linkcode killStates}) and power-loss
 * states under a named profile ({@linkcode powerLossStates}) that an oracle opens
 * ({@linkcode writeImage}). Linux/glibc only.
 *
 * @example
 * ```ts
 * import { buildRecorder, powerLossStates, readLog, recorderEnv } from "./mod.ts";
 * const built = await buildRecorder();
 * if (built.ok) {
 *   const dir = Deno.makeTempDirSync();
 *   Deno.mkdirSync(`${dir}/db`);
 *   const env = recorderEnv({ library: built.path, watched: `${dir}/db`, log: `${dir}/fs.log`, data: true });
 *   await new Deno.Command("sh", { args: ["-c", `echo hi > ${dir}/db/a`], env }).output();
 *   const states = [...powerLossStates(readLog(`${dir}/fs.log`), { profile: "posix" })];
 *   console.log(states.length > 0); // true
 * }
 * ```
 *
 * @module
 */
export {
  buildRecorder,
  platformSkipReason,
  type RecorderBuild,
  RecorderBuildError,
} from "./build.ts";
export {
  type CrashState,
  type FileSet,
  killStates,
  ModelError,
  type PowerLossOptions,
  powerLossStates,
  type PowerLossStats,
  type Profile,
  PROFILES,
  replayMismatch,
  SECTOR_SIZE,
  tearCuts,
  type TornWrite,
  unfollowedRun,
} from "./crash_states.ts";
export { firstDifference, imageDigest, readFolder, writeImage } from "./image.ts";
export { RecoveredStates, recoverSqliteFiles, type StateFiles } from "./recovered.ts";
export {
  errnoName,
  injectedFaults,
  judgeableLog,
  type KindName,
  LogError,
  logProblems,
  type LogRecord,
  opensSynchronously,
  parseLog,
  readLog,
  type RecorderLog,
  RecordKind,
  writesSynchronously,
} from "./log.ts";
export {
  CRASH_KINDS,
  type CrashKind,
  denoCacheDir,
  FAIL_ERRNOS,
  FAIL_KINDS,
  type FailErrno,
  type FailKind,
  recorderEnv,
  type RecorderOptions,
} from "./record.ts";
