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

/** Whether a process with this pid exists (a zombie counts as alive until reaped). */
export function processAlive(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  if (pid === Deno.pid) return true;
  const rc = loadLibrary().symbols.kill(pid, 0);
  return rc === 0 || errno() !== ESRCH;
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
