/**
 * The kinds of fault the injected-errors clause (F1) enumerates, as the field met them,
 * and how a program's calls are walked: which calls of a kind a run makes, which k to
 * fail next, and the recorder's variables that fail it. Shared by F1's own program and
 * the recorded-call sweep's programs under faults.
 *
 * @example
 * ```ts ignore
 * import { callsOf, FAULT_CASES, failOptions, nextCall } from "./fault_cases.ts";
 * import { readLog } from "../../recorder/log.ts";
 * const log = readLog("/tmp/clean/fs.log");
 * for (const fault of FAULT_CASES) {
 *   for (let k = 1; k <= callsOf(log, fault); k = nextCall(k, { quick: true, kind: fault.kind })) {
 *     console.log(fault.name, k, failOptions(fault, k));
 *   }
 * }
 * ```
 *
 * @module
 */
import { handlePaths, type RecorderLog } from "../../recorder/log.ts";
import type { FailErrno, FailKind, RecorderOptions } from "../../recorder/record.ts";

/**
 * A kind of fault, enumerated over its calls.
 *
 * @example
 * ```ts
 * import type { FaultCase } from "./fault_cases.ts";
 * const full: FaultCase = { name: "write ENOSPC", kind: "write", errno: "ENOSPC", count: Infinity };
 * ```
 */
export interface FaultCase {
  /** Its name in the report, e.g. `write ENOSPC (the disk stays full)`. */
  name: string;
  /** Which calls it counts. */
  kind: FailKind;
  /** The error. */
  errno: FailErrno;
  /** How many calls fail from the k-th on (`Infinity`: every later one). */
  count: number;
  /** A short write instead of a failure. */
  short?: boolean;
  /** Only calls on files whose path ends with this. */
  file?: string;
}

/**
 * The kinds of fault F1 enumerates: a disk that stays full, an I/O error on a write, a
 * short write, a failed sync, a failed read, and a journal or WAL that cannot grow.
 *
 * @example
 * ```ts
 * import { FAULT_CASES } from "./fault_cases.ts";
 * console.log(FAULT_CASES.map((c) => c.name).join("; "));
 * ```
 */
export const FAULT_CASES: readonly FaultCase[] = [
  { name: "write ENOSPC (the disk stays full)", kind: "write", errno: "ENOSPC", count: Infinity },
  { name: "write EIO", kind: "write", errno: "EIO", count: 1 },
  { name: "short write", kind: "write", errno: "ENOSPC", count: 1, short: true },
  { name: "fsync EIO", kind: "sync", errno: "EIO", count: 1 },
  { name: "read EIO", kind: "read", errno: "EIO", count: 1 },
  {
    name: "journal growth ENOSPC",
    kind: "write",
    errno: "ENOSPC",
    count: Infinity,
    file: "-journal",
  },
  { name: "WAL growth ENOSPC", kind: "write", errno: "ENOSPC", count: Infinity, file: "-wal" },
];

/**
 * How many calls a fault of this case could fail in a clean run's log: its kind's calls
 * on its file (reads are not logged: twice the writes, a bound).
 *
 * @param log The clean run's log.
 * @param fault The case.
 * @returns The count.
 * @example
 * ```ts ignore
 * import { callsOf, FAULT_CASES } from "./fault_cases.ts";
 * import { readLog } from "../../recorder/log.ts";
 * console.log(callsOf(readLog("/tmp/clean/fs.log"), FAULT_CASES[3]!));
 * ```
 */
export function callsOf(log: RecorderLog, fault: FaultCase): number {
  const paths = handlePaths(log);
  let writes = 0, syncs = 0;
  for (const r of log.records) {
    const path = r.path || paths.get(r.handle) || "";
    if (!r.counted || (fault.file && !path.endsWith(fault.file))) continue;
    if (r.kind === "write") writes++;
    if (r.kind === "sync") syncs++;
  }
  return fault.kind === "write" ? writes : fault.kind === "sync" ? syncs : 2 * writes;
}

/**
 * The next k to fail: every one, or in quick mode the first three and then a stride
 * through the rest (the first calls of a kind are where a store's handling differs most).
 *
 * @param k The k just run.
 * @param how Quick or not, and the fault's kind.
 * @returns The next k.
 * @example
 * ```ts
 * import { nextCall } from "./fault_cases.ts";
 * console.log(nextCall(3, { quick: true, kind: "write" })); // 7
 * ```
 */
export function nextCall(k: number, how: { quick: boolean; kind: FailKind }): number {
  if (!how.quick || k < 3) return k + 1;
  return k + (how.kind === "sync" ? 2 : how.kind === "read" ? 7 : 4);
}

/**
 * The recorder's options that fail call `k` of a case.
 *
 * @param fault The case.
 * @param k The call, from 1.
 * @returns The `fail*` options of `recorderEnv`.
 * @example
 * ```ts
 * import { FAULT_CASES, failOptions } from "./fault_cases.ts";
 * console.log(failOptions(FAULT_CASES[0]!, 2).failAt); // 2
 * ```
 */
export function failOptions(
  fault: FaultCase,
  k: number,
): Pick<
  RecorderOptions,
  "failAt" | "failKind" | "failErrno" | "failCount" | "failShort" | "failFile"
> {
  return {
    failAt: k,
    failKind: fault.kind,
    failErrno: fault.errno,
    failCount: fault.count,
    ...(fault.short ? { failShort: true } : {}),
    ...(fault.file ? { failFile: fault.file } : {}),
  };
}
