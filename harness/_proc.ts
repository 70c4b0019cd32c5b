// What /proc says about processes, read through libc (see _libc.ts).
import { libc, type LibcSymbols, listDir, readBytes, readText } from "./_libc.ts";

/**
 * A `/proc` file's text: `null` when it does not exist (its process is gone), `undefined`
 * when it cannot be read here. Deno reads `/proc` only with every permission (a cell's
 * test has fewer): libc reads it then, through the FFI the process trees already hold.
 */
export function procText(path: string): string | null | undefined {
  try {
    return Deno.readTextFileSync(path);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotCapable)) return null;
  }
  const c = libc();
  if (!c) return undefined;
  return readText(c, path) ?? null;
}

/** The fields of `/proc/<pid>/stat` the tree machinery reads. */
export interface ProcStat {
  /** The pid. */
  pid: number;
  /** `R`, `S`, `D`, `T` (stopped), `t`, `Z` (zombie), `X` (dead), … */
  state: string;
  /** The parent's pid. */
  ppid: number;
  /** Start time in clock ticks since boot: with the pid, names one process for good. */
  startTime: number;
}

/** `/proc/<pid>/stat` parsed, or `undefined` when the process is gone. */
export function procStat(c: LibcSymbols, pid: number | "self"): ProcStat | undefined {
  const text = readText(c, `/proc/${pid}/stat`);
  if (!text) return undefined;
  // The command name may hold spaces and parentheses: the fields start after the last ")".
  const close = text.lastIndexOf(")");
  const fields = text.slice(close + 2).split(" ");
  return {
    pid: Number(text.slice(0, text.indexOf(" "))),
    state: fields[0] ?? "?",
    ppid: Number(fields[1]),
    startTime: Number(fields[19]),
  };
}

/** Whether a stat names a process that can still run (not a zombie, not dead). */
export function running(stat: ProcStat | undefined): stat is ProcStat {
  return stat !== undefined && stat.state !== "Z" && stat.state !== "X";
}

/** Every pid in /proc. */
export function allPids(c: LibcSymbols): number[] {
  return (listDir(c, "/proc") ?? []).filter((name) => /^\d+$/.test(name)).map(Number);
}

/** Every process's stat, by pid. */
export function allStats(c: LibcSymbols): Map<number, ProcStat> {
  const stats = new Map<number, ProcStat>();
  for (const pid of allPids(c)) {
    const stat = procStat(c, pid);
    if (stat) stats.set(pid, stat);
  }
  return stats;
}

/** The command line of a process, its arguments joined by spaces ("" when gone). */
export function commandLine(c: LibcSymbols, pid: number): string {
  const bytes = readBytes(c, `/proc/${pid}/cmdline`);
  if (!bytes?.length) return "";
  return new TextDecoder().decode(bytes).replace(/\0+$/, "").replaceAll("\0", " ");
}

/**
 * The value of one variable in a process's initial environment (`/proc/<pid>/environ`,
 * readable for one's own processes), or `undefined`.
 */
export function environValue(c: LibcSymbols, pid: number, name: string): string | undefined {
  const bytes = readBytes(c, `/proc/${pid}/environ`);
  if (!bytes) return undefined;
  const prefix = `${name}=`;
  for (const entry of new TextDecoder().decode(bytes).split("\0")) {
    if (entry.startsWith(prefix)) return entry.slice(prefix.length);
  }
  return undefined;
}

/** The pids below `roots` in `stats` (by parent pid), the roots not included. */
export function descendantsIn(stats: Map<number, ProcStat>, roots: Iterable<number>): number[] {
  const children = new Map<number, number[]>();
  for (const stat of stats.values()) {
    const list = children.get(stat.ppid);
    if (list) list.push(stat.pid);
    else children.set(stat.ppid, [stat.pid]);
  }
  const seen = new Set<number>(roots);
  const out: number[] = [];
  const queue = [...seen];
  while (queue.length) {
    for (const child of children.get(queue.shift()!) ?? []) {
      if (seen.has(child)) continue;
      seen.add(child);
      out.push(child);
      queue.push(child);
    }
  }
  return out;
}

/** The numbers of the lock calls that can wait, by architecture. */
const LOCK_CALLS: Record<string, { flock: number; fcntl: number }> = {
  x86_64: { flock: 73, fcntl: 72 },
  aarch64: { flock: 32, fcntl: 25 },
};
const LOCK_NB = 4;
const F_SETLKW = 7;
const F_OFD_SETLKW = 38;

/**
 * The lock call a thread of `pid` is blocked in, waiting for another process's lock:
 * `flock` without `LOCK_NB`, or `fcntl` with `F_SETLKW` or `F_OFD_SETLKW`, as
 * `/proc/<pid>/task/<tid>/syscall` shows it (e.g. `thread 12 in flock(21, 2)`).
 * `undefined` when no thread is, or the threads cannot be read.
 */
export function lockWaitOf(c: LibcSymbols, pid: number): string | undefined {
  const calls = LOCK_CALLS[Deno.build.arch];
  if (!calls) return undefined;
  for (const tid of listDir(c, `/proc/${pid}/task`) ?? []) {
    const fields = readText(c, `/proc/${pid}/task/${tid}/syscall`)?.trim().split(" ");
    if (!fields || fields.length < 3) continue; // "running", or gone
    const [nr, fd, op] = fields.slice(0, 3).map((field) => Number(field));
    if (nr === calls.flock && (op! & LOCK_NB) === 0 && (op! & 3) !== 0) {
      return `thread ${tid} in flock(${fd}, ${op})`;
    }
    if (nr === calls.fcntl && (op === F_SETLKW || op === F_OFD_SETLKW)) {
      return `thread ${tid} in fcntl(${fd}, ${op === F_SETLKW ? "F_SETLKW" : "F_OFD_SETLKW"})`;
    }
  }
  return undefined;
}

/**
 * A check that turns true once each given process tree has had a process sit in the same
 * waiting lock call ({@linkcode lockWaitOf}) for `holdMs`: held out by another process's
 * lock, it can do nothing more until that one lets go. It lists the trees (`trees`) and
 * reads `/proc` at most every 20 ms; without libc it stays false.
 */
export function lockWaits(
  holdMs: number,
): (trees: () => readonly (readonly number[])[]) => boolean {
  let seen: { calls: string; since: number } | undefined;
  let checked = -Infinity;
  let answer = false;
  return (trees) => {
    const now = performance.now();
    if (now - checked < 20) return answer;
    checked = now;
    const c = libc();
    const calls = c
      ? trees().map((pids) => pids.map((pid) => lockWaitOf(c, pid)).find(Boolean))
      : [];
    if (!calls.length || calls.some((call) => call === undefined)) {
      seen = undefined;
      return answer = false;
    }
    const key = calls.join("; ");
    if (seen?.calls !== key) seen = { calls: key, since: now };
    return answer = now - seen.since >= holdMs;
  };
}
