/**
 * How a child is run under the recorder: the environment `fs_recorder.c` reads.
 *
 * @example
 * ```ts
 * import { recorderEnv } from "./record.ts";
 * const env = recorderEnv({
 *   library: "/repo/.cache/recorder/abc/libfsrecorder.so",
 *   watched: "/tmp/run/db",
 *   log: "/tmp/run/fs.log",
 *   crashAt: 3,
 * });
 * console.log(env.FSREC_CRASH_AT); // "3"
 * const full = recorderEnv({
 *   library: "/repo/.cache/recorder/abc/libfsrecorder.so",
 *   watched: "/tmp/run/db",
 *   log: "/tmp/run/fs.log",
 *   failAt: 2,
 *   failKind: "write",
 *   failErrno: "ENOSPC",
 * });
 * console.log(full.FSREC_FAIL_ERRNO); // "ENOSPC"
 * ```
 *
 * @module
 */

/** Which calls a crash point counts: all of them, or one kind. */
export type CrashKind = "any" | "write" | "sync" | "name";

/** The crash kinds, by name. */
export const CRASH_KINDS: readonly CrashKind[] = ["any", "write", "sync", "name"];

/** Which calls an injected fault counts and fails: data writes, fsync/fdatasync, reads. */
export type FailKind = "write" | "sync" | "read";

/** The fault kinds, by name. */
export const FAIL_KINDS: readonly FailKind[] = ["write", "sync", "read"];

/** The errors a fault injects: a full disk, a quota, an I/O error. */
export type FailErrno = "ENOSPC" | "EDQUOT" | "EIO";

/** The injected errors, by name. */
export const FAIL_ERRNOS: readonly FailErrno[] = ["ENOSPC", "EDQUOT", "EIO"];

/**
 * Options of {@linkcode recorderEnv}.
 *
 * @example
 * ```ts
 * import type { RecorderOptions } from "./record.ts";
 * const options: RecorderOptions = { library: "lib.so", watched: "/tmp/db", log: "/tmp/fs.log" };
 * ```
 */
export interface RecorderOptions {
  /** The built recorder (`buildRecorder`). */
  library: string;
  /** The watched folder (absolute): the store's files live under it. */
  watched: string;
  /** The log file (outside the watched folder). */
  log: string;
  /** Keep the bytes of every write (needed for power-loss states; default false). */
  data?: boolean;
  /** A file whose writes are logged as marks (the acknowledgement journal). */
  mark?: string;
  /** Folders where writes are expected besides the watched one (Deno's cache, the run). */
  ignore?: readonly string[];
  /** The log's bound in bytes (default 256 MiB). */
  maxBytes?: number;
  /** Kill the child with SIGKILL just before this counted call (1-based). */
  crashAt?: number;
  /** Which calls `crashAt` counts (default `any`). */
  crashKind?: CrashKind;
  /**
   * Count calls only between the n-th and the next write to `mark` (1-based): the
   * program brackets one operation with two marks, and `crashAt` walks its calls.
   */
  armAfterMarks?: number;
  /**
   * Stop the child with SIGSTOP just before this lock call (`fcntl` `F_SETLK*`, `flock`, or a
   * name made only if missing: `mkdir`, `link`, a `rename`'s target, an `O_EXCL` open) on a
   * watched file (1-based, counted while armed); the caller continues it with SIGCONT.
   */
  stopAt?: number;
  /** A file the child creates just before that stop (outside the watched folder). */
  stopFile?: string;
  /**
   * What `stopAt` counts: lock calls (the default), or `write`: the calls that change a
   * file (any counted call), so that the child is held just before its first write.
   */
  stopKind?: "lock" | "write";
  /**
   * A file the child creates when a lock call on a watched file is refused while armed
   * (a blocking one is tried without waiting first): it was held out by another's lock. A
   * name it found made also creates `<refusedFile>.name` (no kernel table names that
   * lock's holder).
   */
  refusedFile?: string;
  /**
   * Fail this call of `failKind` on a watched file instead of making it (1-based, on a
   * count of its own, counted while armed as `crashAt` is): `write` counts `write`,
   * `pwrite`, `writev`, `pwritev`; `sync` counts `fsync`, `fdatasync`; `read` counts
   * `read`, `pread`, `readv`, `preadv`. The log marks the call failed and injected.
   */
  failAt?: number;
  /** Which calls `failAt` counts (required with it). */
  failKind?: FailKind;
  /** The error the failing calls return (default `EIO`). */
  failErrno?: FailErrno;
  /**
   * How many calls fail from `failAt` on (default 1); `Infinity`: every later one, a disk
   * that stays full or broken.
   */
  failCount?: number;
  /**
   * A failing write of 2 bytes or more writes its first half and returns that count (a
   * short write) instead of failing; a shorter one fails with `failErrno`.
   */
  failShort?: boolean;
  /**
   * Count only calls on files whose path ends with this (`-wal`, `-journal`: a disk that
   * fills as the WAL or the journal grows).
   */
  failFile?: string;
  /**
   * Before each unlink or rename of a watched file, look it up among every other
   * process's open files (`/proc/<pid>/fd`) and log a `pulled` hazard when one has it
   * open (default false: the scan costs a system call per open file of every process,
   * on every such call).
   */
  pulledFiles?: boolean;
}

/**
 * The environment variables that run a child under the recorder (merge them into the
 * child's `env`).
 *
 * @param options The recorder's settings.
 * @returns The variables.
 * @example
 * ```ts
 * import { recorderEnv } from "./record.ts";
 * const env = recorderEnv({ library: "lib.so", watched: "/tmp/db", log: "/tmp/fs.log" });
 * console.log(env.LD_PRELOAD); // "lib.so"
 * ```
 */
export function recorderEnv(options: RecorderOptions): Record<string, string> {
  if (!options.watched.startsWith("/")) {
    throw new TypeError(`Invalid watched folder "${options.watched}": use an absolute path`);
  }
  const env: Record<string, string> = {
    LD_PRELOAD: options.library,
    FSREC_DIR: options.watched,
    FSREC_LOG: options.log,
    FSREC_DATA: options.data ? "1" : "0",
  };
  if (options.mark) env.FSREC_MARK = options.mark;
  if (options.ignore?.length) {
    // One folder a line: a path may hold a colon, the recorder's other separator.
    const broken = options.ignore.find((folder) => folder.includes("\n"));
    if (broken !== undefined) {
      throw new TypeError(
        `Invalid ignored folder ${
          JSON.stringify(broken)
        }: the recorder takes one folder a line, so a path cannot hold a newline`,
      );
    }
    env.FSREC_IGNORE = options.ignore.join("\n");
  }
  if (options.maxBytes !== undefined) env.FSREC_MAX_BYTES = String(options.maxBytes);
  if (options.crashAt !== undefined) {
    env.FSREC_CRASH_AT = String(options.crashAt);
    env.FSREC_CRASH_KIND = options.crashKind ?? "any";
  }
  if (options.stopAt !== undefined) env.FSREC_STOP_AT = String(options.stopAt);
  if (options.stopFile !== undefined) env.FSREC_STOP_FILE = options.stopFile;
  if (options.stopKind !== undefined) env.FSREC_STOP_KIND = options.stopKind;
  if (options.refusedFile !== undefined) env.FSREC_REFUSED_FILE = options.refusedFile;
  if (options.armAfterMarks !== undefined) env.FSREC_ARM_MARKS = String(options.armAfterMarks);
  if (options.pulledFiles) env.FSREC_PULLED = "1";
  Object.assign(env, faultEnv(options));
  return env;
}

/** The `FSREC_FAIL_*` variables of an injected fault, checked. */
function faultEnv(options: RecorderOptions): Record<string, string> {
  const { failAt, failKind, failErrno, failCount, failShort, failFile } = options;
  if (failAt === undefined) {
    const given = [failKind, failErrno, failCount, failShort, failFile];
    if (given.some((value) => value !== undefined)) {
      throw new TypeError(
        "Invalid fault: failKind, failErrno, failCount, failShort and failFile need failAt",
      );
    }
    return {};
  }
  if (!Number.isInteger(failAt) || failAt < 1) {
    throw new TypeError(`Invalid failAt ${failAt}: use a whole number from 1`);
  }
  if (!failKind || !FAIL_KINDS.includes(failKind)) {
    throw new TypeError(`Invalid failKind "${failKind}": use one of ${FAIL_KINDS.join(", ")}`);
  }
  if (failErrno !== undefined && !FAIL_ERRNOS.includes(failErrno)) {
    throw new TypeError(`Invalid failErrno "${failErrno}": use one of ${FAIL_ERRNOS.join(", ")}`);
  }
  const count = failCount ?? 1;
  if (count !== Infinity && (!Number.isInteger(count) || count < 1)) {
    throw new TypeError(`Invalid failCount ${count}: use a whole number from 1, or Infinity`);
  }
  if (failShort && failKind !== "write") {
    throw new TypeError(`Invalid fault: failShort applies to writes, not to "${failKind}"`);
  }
  return {
    FSREC_FAIL_AT: String(failAt),
    FSREC_FAIL_KIND: failKind,
    FSREC_FAIL_ERRNO: failErrno ?? "EIO",
    FSREC_FAIL_COUNT: count === Infinity ? "0" : String(count),
    FSREC_FAIL_SHORT: failShort ? "1" : "0",
    ...(failFile ? { FSREC_FAIL_FILE: failFile } : {}),
  };
}

/**
 * Deno's cache folder, where a Deno child writes on its own (compiled code, analysis
 * caches): `DENO_DIR`, else `$XDG_CACHE_HOME/deno`, else `$HOME/.cache/deno`.
 *
 * @returns The folder.
 * @example
 * ```ts
 * import { denoCacheDir } from "./record.ts";
 * console.log(denoCacheDir().endsWith("deno")); // true unless DENO_DIR says otherwise
 * ```
 */
export function denoCacheDir(): string {
  const explicit = Deno.env.get("DENO_DIR");
  if (explicit) return explicit;
  const xdg = Deno.env.get("XDG_CACHE_HOME");
  if (xdg) return `${xdg}/deno`;
  return `${Deno.env.get("HOME") ?? "/root"}/.cache/deno`;
}
