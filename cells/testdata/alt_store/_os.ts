// The alt store's own process seams, independent of the reference store's: whether a
// pid is alive and killing itself, through libc's kill(2) reached via the SQLite
// library's handle (dlsym searches its dependencies), so the store needs no
// --allow-run; and its crash points, read from SESSION_DB_CRASH_AT.
import { sqliteLibraryPath } from "../../../session_db/sqlite/mod.ts";

let libc: Deno.DynamicLibrary<{ kill: { parameters: ["i32", "i32"]; result: "i32" } }> | undefined;

function kill(pid: number, signal: number): number {
  libc ??= Deno.dlopen(sqliteLibraryPath(), {
    kill: { parameters: ["i32", "i32"], result: "i32" },
  });
  return libc.symbols.kill(pid, signal);
}

/**
 * Whether a process exists (signal 0 probes without sending). A failure counts as dead:
 * the processes involved run as the same user, so EPERM does not arise.
 */
export function alive(pid: number | null | undefined): boolean {
  if (typeof pid !== "number" || !Number.isSafeInteger(pid) || pid <= 0) return false;
  return pid === Deno.pid || kill(pid, 0) === 0;
}

const armed = (() => {
  let spec: string | undefined;
  try {
    spec = Deno.env.get("SESSION_DB_CRASH_AT");
  } catch {
    return undefined; // no env access: nothing armed
  }
  const match = spec ? /^([^@]+)(?:@(\d+))?$/.exec(spec) : null;
  return match ? { name: match[1]!, k: Number(match[2] ?? 1), hits: 0 } : undefined;
})();

/** Kills this process with SIGKILL the k-th time it passes the armed point. */
export function crashPoint(name: string): void {
  if (armed?.name !== name || ++armed.hits !== armed.k) return;
  kill(Deno.pid, 9);
  Deno.exit(137); // unreachable unless the signal was refused
}
