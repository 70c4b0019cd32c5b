// Process liveness and self-kill through libc, reached via the SQLite library's
// handle (dlsym searches its dependencies). This keeps children free of
// `--allow-run`: they only hold `--allow-ffi` scoped to the SQLite library.
import { copyBytes, loadLibrary } from "./sqlite/_ffi.ts";

const SIGKILL = 9;
const EPERM = 1;
const ESRCH = 3;

let errnoAddress: bigint | undefined;

/**
 * Where this thread's errno is, or 0n where libc offers no way to find it. Kept: a module
 * runs on one thread, and errno's place is fixed for the thread's life.
 */
function errnoLocation(): bigint {
  if (errnoAddress !== undefined) return errnoAddress;
  const { symbols } = loadLibrary();
  errnoAddress = symbols.__errno_location?.() ?? symbols.__error?.() ?? 0n;
  return errnoAddress;
}

function errnoAt(location: bigint): number {
  if (location === 0n) return 0;
  const { symbols } = loadLibrary();
  return new DataView(copyBytes(symbols, location, 4).buffer).getInt32(0, true);
}

let procMounted: boolean | undefined;

/**
 * The thread group (process) the id `pid` belongs to, read from `/proc/<pid>/status`
 * through libc (no read permission needed): `null` when `/proc` has no such process,
 * `undefined` where there is no `/proc` to ask.
 */
function threadGroupOf(pid: number): number | null | undefined {
  const { symbols } = loadLibrary();
  if (!symbols.open || !symbols.read || !symbols.close) return undefined;
  const open = (path: string) => symbols.open!(new TextEncoder().encode(`${path}\0`), 0);
  if (procMounted === undefined) {
    const self = open("/proc/self/status");
    procMounted = self >= 0;
    if (procMounted) symbols.close(self);
  }
  const fd = open(`/proc/${pid}/status`);
  if (fd < 0) return procMounted ? null : undefined;
  try {
    const buffer = new Uint8Array(4096);
    const n = Number(symbols.read(fd, buffer, BigInt(buffer.length)));
    if (n <= 0) return undefined;
    const tgid = /^Tgid:\s*(\d+)$/m.exec(new TextDecoder().decode(buffer.subarray(0, n)))?.[1];
    return tgid === undefined ? undefined : Number(tgid);
  } finally {
    symbols.close(fd);
  }
}

/**
 * Whether a process with this pid exists (a zombie counts as alive until reaped). On
 * Linux, `kill(id, 0)` also succeeds for the id of a thread of another process: thread ids
 * come from the same space and are used far faster than process ids, so a dead owner's
 * pid soon names a thread somewhere. Such an id is no process: the owner is dead.
 */
export function processAlive(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  if (pid === Deno.pid) return true;
  const { symbols } = loadLibrary();
  const kill = symbols.kill;
  // Found before the kill: binding a symbol on first use makes system calls of its own.
  const location = errnoLocation();
  // errno can still be lost between the failed kill and its read: the runtime may make a
  // system call of its own there (the allocations on the way may start a GC). ESRCH is
  // final; a failure that says anything else is asked again, and `/proc` decides.
  let refused = false;
  for (let attempt = 0; attempt < 3; attempt++) {
    if (kill(pid, 0) === 0) break;
    const error = errnoAt(location);
    if (error === ESRCH) return false;
    refused = error === EPERM;
  }
  const group = threadGroupOf(pid);
  // Another user's process may be hidden from `/proc` (hidepid): kill said it exists.
  if (group === null) return refused;
  return group === undefined || group === pid;
}

/**
 * Kills this process with SIGKILL: no unwinding, no flushing, like a crash. In a child
 * the harness spawned, the whole process tree goes at once (a store's worker or helper
 * processes too), through the kill its guard installed (`harness/_child_guard.ts`).
 */
export function killSelf(): never {
  const killTree = (globalThis as Record<symbol, unknown>)[Symbol.for("session-cells.killTree")];
  if (typeof killTree === "function") killTree();
  loadLibrary().symbols.kill(Deno.pid, SIGKILL);
  // Unreachable unless the signal was refused; exit the hard way regardless.
  Deno.exit(137);
}
