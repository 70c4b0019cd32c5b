// Process liveness and self-kill through libc, reached via the SQLite library's
// handle (dlsym searches its dependencies). This keeps children free of
// `--allow-run`: they only hold `--allow-ffi` scoped to the SQLite library.
import { copyBytes, loadLibrary } from "./sqlite/_ffi.ts";

const SIGKILL = 9;
const ESRCH = 3;

function errno(): number {
  const { symbols } = loadLibrary();
  const location = symbols.__errno_location?.() ?? symbols.__error?.() ?? 0n;
  if (location === 0n) return 0;
  return new DataView(copyBytes(symbols, location, 4).buffer).getInt32(0, true);
}

/**
 * The thread group (process) the id `pid` belongs to, read from `/proc/<pid>/status`
 * through libc (no read permission needed), or `undefined` where there is no `/proc`.
 */
function threadGroupOf(pid: number): number | undefined {
  const { symbols } = loadLibrary();
  if (!symbols.open || !symbols.read || !symbols.close) return undefined;
  const fd = symbols.open(new TextEncoder().encode(`/proc/${pid}/status\0`), 0);
  if (fd < 0) return undefined;
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
  // errno can be lost between the failed kill and its read: the runtime may make a system
  // call of its own there (the allocations on the way may start a GC). ESRCH is final;
  // a failure that says anything else is asked again, so a dead owner is not taken alive.
  for (let attempt = 0; attempt < 3; attempt++) {
    if (symbols.kill(pid, 0) === 0) break;
    if (errno() === ESRCH) return false;
  }
  const group = threadGroupOf(pid);
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
