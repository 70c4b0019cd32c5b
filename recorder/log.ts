/**
 * The recorder's log: an append-only binary file, one record per libc call that can change
 * what survives of the watched folder, written by `fs_recorder.c` after the call returned
 * (one `writev` per record, so a SIGKILL from outside can tear only the last one).
 *
 * Record: a 40-byte little-endian header, then the path bytes, then the data bytes.
 * Reads are logged only when a fault fails them (`read` records, never counted).
 * Hazards the process commits are `hazard` records, logged just before the call
 * ({@linkcode hazards} names them): `a` is the {@linkcode HazardCode}, the path the file
 * (the second library's, for a second SQLite), the second path the call's name (the
 * first library's), `b` the other handle, the child's pid or the other process's pid,
 * `extra` the descriptor holding the locks, the parent's pid or the other's descriptor.
 *
 * | offset | type | field |
 * | --- | --- | --- |
 * | 0 | u32 | magic `0x31525346` ("FSR1") |
 * | 4 | u8 | kind ({@linkcode RecordKind}) |
 * | 5 | u8 | flags: 1 counted (a crash point), 2 failed, 4 injected (a fault `FSREC_FAIL_AT` made), 8 synchronous (a `pwritev2` with `RWF_DSYNC` or `RWF_SYNC`) |
 * | 6 | u16 | path length (two paths are separated by a NUL) |
 * | 8 | u32 | sequence number |
 * | 12 | u32 | handle (one per successful open; dups share it) |
 * | 16 | i64 | a: offset (write, read, fallocate), size (truncate), open flags, pid (hello) |
 * | 24 | i64 | b: bytes written or asked to read, length (fallocate), mode (open), mmap length, the form of an injected failed sync |
 * | 32 | i32 | extra: errno when failed, else the sync form, fallocate mode, rename flags, -shm, the bytes an injected short write was asked for, 1 when an open made its file |
 * | 36 | u32 | data length (the written bytes, when the recorder keeps data) |
 *
 * @example
 * ```ts
 * import { parseLog } from "./log.ts";
 * const log = parseLog(new Uint8Array(0));
 * console.log(log.records.length, log.tornBytes); // 0 0
 * ```
 *
 * @module
 */
import { HarnessError } from "../harness/harness_error.ts";

/** The record kinds, as `fs_recorder.c` numbers them. */
export const RecordKind = {
  open: 1,
  write: 2,
  truncate: 3,
  fallocate: 4,
  sync: 5,
  syncAll: 6,
  rename: 7,
  unlink: 8,
  mkdir: 9,
  rmdir: 10,
  link: 11,
  mmap: 12,
  unmodelled: 13,
  outside: 14,
  mark: 15,
  overflow: 16,
  hello: 17,
  read: 18,
  hazard: 19,
} as const;

/**
 * What a `hazard` record found (its `a`): a close that drops the process's fcntl locks,
 * a second SQLite library, a forked child's use of an inherited descriptor, an unlink or
 * rename of a file another process has open.
 */
export const HazardCode = {
  lockDrop: 1,
  secondSqlite: 2,
  forkUse: 3,
  pulled: 4,
} as const;

/**
 * A kind's name.
 *
 * @example
 * ```ts
 * import { type KindName, RecordKind } from "./log.ts";
 * const kind: KindName = "sync";
 * console.log(RecordKind[kind]); // 5
 * ```
 */
export type KindName = keyof typeof RecordKind;

/** How a sync record synced (`extra` of a `sync` record). */
export const SyncForm = ["fsync", "fdatasync", "sync_file_range", "msync"] as const;

const KIND_NAMES: Record<number, KindName> = Object.fromEntries(
  Object.entries(RecordKind).map(([name, value]) => [value, name as KindName]),
);

/** The header size. */
export const HEADER_SIZE = 40;
const MAGIC = 0x31525346;

/**
 * One call read back from the log.
 *
 * @example
 * ```ts
 * import type { LogRecord } from "./log.ts";
 * function describe(record: LogRecord): string {
 *   return `${record.seq} ${record.kind}${record.failed ? " (failed)" : ""} ${record.path}`;
 * }
 * ```
 */
export interface LogRecord {
  /** The sequence number (0, 1, 2, … in log order). */
  seq: number;
  /** What the call was. */
  kind: KindName;
  /** Whether it is a crash point (counted by `FSREC_CRASH_AT`). */
  counted: boolean;
  /** Whether the call failed (then `extra` is its errno and it changed nothing). */
  failed: boolean;
  /**
   * Whether the recorder injected the outcome (`FSREC_FAIL_AT`): a call failed without
   * being made, or a short write (not failed; `extra` is the bytes it was asked for).
   */
  injected: boolean;
  /**
   * Whether the write itself was synchronous (`pwritev2` with `RWF_DSYNC` or `RWF_SYNC`):
   * durable when it returned.
   */
  synchronous: boolean;
  /** The handle (0 when the call named a path). */
  handle: number;
  /** The path (absolute), or `""`. */
  path: string;
  /** The second path (rename and link targets), or `""`. */
  path2: string;
  /** Offset, size, open flags or pid, by kind. */
  a: number;
  /** Bytes written, length, mode, by kind. */
  b: number;
  /**
   * Errno when failed, else the sync form, fallocate mode, rename flags, `-shm` flag, or
   * for an open 1 when it made the file (it was missing just before).
   */
  extra: number;
  /** The bytes written (empty when the recorder kept no data). */
  data: Uint8Array;
}

/**
 * What {@linkcode parseLog} found.
 *
 * @example
 * ```ts
 * import { parseLog, type RecorderLog } from "./log.ts";
 * const log: RecorderLog = parseLog(new Uint8Array(0));
 * console.log(log.watched); // ""
 * ```
 */
export interface RecorderLog {
  /** The complete records, in order (hello records left out). */
  records: LogRecord[];
  /** Bytes dropped at the end: a record torn by a kill (0 when none). */
  tornBytes: number;
  /** The watched folder the recorder announced, or `""`. */
  watched: string;
  /** The pids that loaded the recorder (one per process that wrote the log). */
  pids: number[];
}

/**
 * Raised when the log is damaged before its last record, or when a process was recorded
 * twice into one log.
 *
 * @example
 * ```ts
 * import { LogError, parseLog } from "./log.ts";
 * try {
 *   parseLog(new Uint8Array(80).fill(7));
 * } catch (error) {
 *   console.log(error instanceof LogError); // true
 * }
 * ```
 */
export class LogError extends Error {
  /** Creates the error. */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "LogError";
  }
}

const decoder = new TextDecoder();

/**
 * Parses a recorder log.
 *
 * @param bytes The log file's content.
 * @returns The records and how many torn bytes were dropped.
 * @throws {LogError} When a record other than the last is damaged.
 * @example
 * ```ts
 * import { parseLog } from "./log.ts";
 * const { records } = parseLog(new Uint8Array(0));
 * console.log(records.filter((record) => record.kind === "sync").length); // 0
 * ```
 */
export function parseLog(bytes: Uint8Array): RecorderLog {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const records: LogRecord[] = [];
  const pids: number[] = [];
  let watched = "";
  let at = 0;
  while (at < bytes.length) {
    if (bytes.length - at < HEADER_SIZE) break;
    const magic = view.getUint32(at, true);
    if (magic !== MAGIC) {
      throw new LogError(
        `Damaged recorder log: no record header at byte ${at} of ${bytes.length} (the log was written by something else, or a record was cut before the last)`,
      );
    }
    const kindNumber = bytes[at + 4]!;
    const kind = KIND_NAMES[kindNumber];
    if (!kind) {
      throw new LogError(`Damaged recorder log: unknown record kind ${kindNumber} at byte ${at}`);
    }
    const flags = bytes[at + 5]!;
    const pathLength = view.getUint16(at + 6, true);
    const dataLength = view.getUint32(at + 36, true);
    const end = at + HEADER_SIZE + pathLength + dataLength;
    if (end > bytes.length) break;
    const pathBytes = bytes.subarray(at + HEADER_SIZE, at + HEADER_SIZE + pathLength);
    const nul = pathBytes.indexOf(0);
    const record: LogRecord = {
      seq: view.getUint32(at + 8, true),
      kind,
      counted: (flags & 1) !== 0,
      failed: (flags & 2) !== 0,
      injected: (flags & 4) !== 0,
      synchronous: (flags & 8) !== 0,
      handle: view.getUint32(at + 12, true),
      path: decoder.decode(nul < 0 ? pathBytes : pathBytes.subarray(0, nul)),
      path2: nul < 0 ? "" : decoder.decode(pathBytes.subarray(nul + 1)),
      a: Number(view.getBigInt64(at + 16, true)),
      b: Number(view.getBigInt64(at + 24, true)),
      extra: view.getInt32(at + 32, true),
      data: bytes.subarray(at + HEADER_SIZE + pathLength, end),
    };
    at = end;
    if (kind === "hello") {
      pids.push(record.a);
      watched = record.path;
      continue;
    }
    records.push(record);
  }
  return { records, tornBytes: bytes.length - at, watched, pids };
}

/**
 * Reads and parses a recorder log file.
 *
 * @param path The log file.
 * @returns The parsed log.
 * @throws {LogError} When the log is damaged before its last record.
 * @throws {HarnessError} When there is no log: the recorder was never loaded in the
 * store's process (`LD_PRELOAD` not honoured), so nothing was recorded, never the store's
 * failure.
 * @example
 * ```ts
 * import { readLog } from "./log.ts";
 * const path = `${Deno.makeTempDirSync()}/fs.log`;
 * Deno.writeFileSync(path, new Uint8Array(0));
 * console.log(readLog(path).records); // []
 * ```
 */
export function readLog(path: string): RecorderLog {
  let bytes: Uint8Array;
  try {
    bytes = Deno.readFileSync(path);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
    throw new HarnessError(
      `Cannot read the recorder's log "${path}": the recorded process never loaded the recorder (LD_PRELOAD), so nothing was recorded`,
      { cause: error },
    );
  }
  return parseLog(bytes);
}

/** What an unmodelled record was, in words (the recorder logs the call's name or path). */
function unmodelledCall(record: LogRecord): string {
  if (record.a === RecordKind.rename || record.a === RecordKind.link) {
    return `a ${
      record.a === RecordKind.rename ? "rename" : "link"
    } moves "${record.path}" across the watched folder's edge (its writes happened outside the log)`;
  }
  if (!record.path) {
    return `a write of more buffers than the recorder logs at once (handle ${record.handle})`;
  }
  if (!record.path.includes("/")) {
    return `${record.path} (a copy made in the kernel: its bytes are never seen; copy with read and write instead)`;
  }
  return `"${record.path}" written through stdio (fopen) or made a symbolic link`;
}

/**
 * Problems that make a log unfit to judge: calls outside the watched folder, a log past
 * its bound, calls the model cannot follow, a writable shared mapping of a durable file.
 * SQLite's `-shm` index is mapped writable but is not durable state, so it is not one.
 *
 * @param log The parsed log.
 * @returns One line per problem; `[]` when the log can be judged.
 * @example
 * ```ts
 * import { logProblems, parseLog } from "./log.ts";
 * console.log(logProblems(parseLog(new Uint8Array(0)))); // []
 * ```
 */
export function logProblems(log: RecorderLog): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  const once = (line: string): void => {
    if (seen.has(line)) return;
    seen.add(line);
    problems.push(line);
  };
  for (const record of log.records) {
    switch (record.kind) {
      case "outside":
        once(
          `The child opened "${record.path}" for writing outside the watched folder "${log.watched}" (keep every file of the store under the folder, or list the path in FSREC_IGNORE)`,
        );
        break;
      case "overflow":
        once(
          `The recorder log passed its bound at ${record.a} bytes (raise FSREC_MAX_BYTES or shorten the workload)`,
        );
        break;
      case "unmodelled":
        once(`The child made a call the recorder cannot model: ${unmodelledCall(record)}`);
        break;
      case "mmap":
        if (record.extra !== 1) {
          once(
            `The child maps "${record.path}" shared and writable: its writes through memory are not recorded (a power-loss model of it would be wrong)`,
          );
        }
        break;
    }
  }
  return problems;
}

/**
 * The log, when it can be judged; else a {@linkcode HarnessError} naming its
 * {@linkcode logProblems}: the recorder's model cannot follow such a run, so nothing can be
 * said of the store from it (an ERROR, never a FAIL).
 *
 * @param log The parsed log.
 * @param where Where the run is kept, for the message.
 * @returns The same log.
 * @throws {HarnessError} When the log has a problem.
 * @example
 * ```ts
 * import { judgeableLog, parseLog } from "./log.ts";
 * console.log(judgeableLog(parseLog(new Uint8Array(0)), "/tmp/run").records.length); // 0
 * ```
 */
export function judgeableLog(log: RecorderLog, where: string): RecorderLog {
  const unfit = logProblems(log);
  if (unfit.length) {
    throw new HarnessError(
      `The recorded run cannot be judged: ${unfit.join("; ")} (run kept in ${where})`,
    );
  }
  return log;
}

/** Errno names of the errors a fault injects or a store commonly meets. */
const ERRNO_NAMES: Record<number, string> = { 5: "EIO", 28: "ENOSPC", 122: "EDQUOT" };

/**
 * An errno's name (`EIO`, `ENOSPC`, `EDQUOT`), or `errno <n>` for others.
 *
 * @param errno The number.
 * @returns The name.
 * @example
 * ```ts
 * import { errnoName } from "./log.ts";
 * console.log(errnoName(28)); // "ENOSPC"
 * ```
 */
export function errnoName(errno: number): string {
  return ERRNO_NAMES[errno] ?? `errno ${errno}`;
}

/**
 * The path each handle of the log was opened on (one handle per successful open: the
 * calls made through a descriptor name its handle, not its path).
 *
 * @param log The parsed log.
 * @returns Path by handle; a call's file is `path || paths.get(handle)`.
 * @example
 * ```ts ignore
 * import { handlePaths, readLog } from "./log.ts";
 * const log = readLog("/tmp/run/fs.log");
 * const paths = handlePaths(log);
 * for (const r of log.records) console.log(r.kind, r.path || paths.get(r.handle));
 * ```
 */
export function handlePaths(log: RecorderLog): Map<number, string> {
  const paths = new Map<number, string>();
  for (const record of log.records) {
    if (record.kind === "open") paths.set(record.handle, record.path);
  }
  return paths;
}

/**
 * Whether `record` opens a file with `O_DSYNC` or `O_SYNC` (which holds the `O_DSYNC`
 * bit): every write through its handle returns once its data is durable. SQLite's `-shm`
 * index is never state, so its opens are left out.
 *
 * @param record A log record.
 * @returns `true` for a successful synchronous open of a file.
 * @example
 * ```ts
 * import { opensSynchronously, parseLog } from "./log.ts";
 * const handles = new Set<number>();
 * for (const r of parseLog(new Uint8Array(0)).records) {
 *   if (opensSynchronously(r)) handles.add(r.handle);
 * }
 * console.log(handles.size); // 0
 * ```
 */
export function opensSynchronously(record: LogRecord): boolean {
  const O_DSYNC = 0x1000, O_DIRECTORY = 0x10000;
  return record.kind === "open" && !record.failed && (record.a & O_DSYNC) !== 0 &&
    (record.a & O_DIRECTORY) === 0 && !record.path.endsWith("-shm");
}

/**
 * Whether `record` is a synchronous write: through one of `handles` (opened synchronously,
 * see {@linkcode opensSynchronously}), or a `pwritev2` with `RWF_DSYNC` or `RWF_SYNC`. It
 * returned once its data was durable.
 *
 * @param record A log record.
 * @param handles The synchronous handles opened so far.
 * @returns `true` for such a completed write of at least one byte.
 * @example
 * ```ts
 * import { writesSynchronously, parseLog } from "./log.ts";
 * const log = parseLog(new Uint8Array(0));
 * console.log(log.records.some((r) => writesSynchronously(r, new Set([1])))); // false
 * ```
 */
export function writesSynchronously(record: LogRecord, handles: ReadonlySet<number>): boolean {
  return record.kind === "write" && !record.failed && record.b > 0 &&
    (record.synchronous || handles.has(record.handle));
}

/**
 * The calls a fault injected, one line each naming the call, its file and its outcome:
 * `#7 write "/run/db/s.db" at 4096: failed with ENOSPC (injected)`, or a short write
 * `#7 write "/run/db/s.db" at 0: short, 2048 of 4096 bytes (injected)`.
 *
 * @param log The parsed log.
 * @returns The lines, in log order; `[]` when nothing was injected (the k-th call of the
 * kind was never made).
 * @example
 * ```ts
 * import { injectedFaults, parseLog } from "./log.ts";
 * console.log(injectedFaults(parseLog(new Uint8Array(0)))); // []
 * ```
 */
export function injectedFaults(log: RecorderLog): string[] {
  const paths = handlePaths(log);
  const lines: string[] = [];
  for (const record of log.records) {
    if (!record.injected) continue;
    const file = record.path || paths.get(record.handle) || `handle ${record.handle}`;
    const form = record.kind === "sync" ? ` (${SyncForm[record.b] ?? "sync"})` : "";
    const at = record.kind === "sync" ? "" : ` at ${record.a}`;
    const outcome = record.failed
      ? `failed with ${errnoName(record.extra)}`
      : `short, ${record.b} of ${record.extra} bytes`;
    lines.push(`#${record.seq} ${record.kind}${form} "${file}"${at}: ${outcome} (injected)`);
  }
  return lines;
}

/**
 * The hazards the recorded process committed, one line each naming the call:
 * `#12 close "/run/db/s.db" (handle 3) while handle 2 holds fcntl locks: the process's
 * locks on the file are dropped`, `#7 unlink "/run/db/s.db-wal" while process 4242 has it
 * open (descriptor 5): …`.
 *
 * @param log The parsed log.
 * @param codes The hazard codes to keep (default: all).
 * @returns The lines, in log order; `[]` when none.
 * @example
 * ```ts
 * import { hazards, parseLog } from "./log.ts";
 * console.log(hazards(parseLog(new Uint8Array(0)))); // []
 * ```
 */
export function hazards(log: RecorderLog, codes?: readonly number[]): string[] {
  const lines: string[] = [];
  for (const record of log.records) {
    if (record.kind !== "hazard" || (codes && !codes.includes(record.a))) continue;
    lines.push(`#${record.seq} ${describeHazard(record)}`);
  }
  return lines;
}

function describeHazard(record: LogRecord): string {
  const { path, path2: call, handle, b, extra } = record;
  switch (record.a) {
    case HazardCode.lockDrop:
      return `${call} "${path}" (handle ${handle}) while handle ${b} (descriptor ${extra}) holds fcntl locks on it: the process's locks on the file are dropped`;
    case HazardCode.secondSqlite:
      return `dlopen "${path}" while "${call}" is loaded: a second SQLite library in a process that opens the store's files (each keeps its own lock table and drops the other's locks)`;
    case HazardCode.forkUse:
      return `${call} "${path}" (handle ${handle}) in process ${b}, forked from ${extra} with it open, before exec: the child uses the parent's descriptor`;
    case HazardCode.pulled:
      return `${call} "${path}" while process ${b} has it open (descriptor ${extra}): that process goes on with a file no later opener sees`;
    default:
      return `hazard ${record.a} "${path}" (${call})`;
  }
}
