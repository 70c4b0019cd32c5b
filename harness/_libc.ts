// libc through FFI, for the process-tree machinery: Deno's file APIs refuse /proc and
// /sys without --allow-all, and Deno.kill needs an unscoped --allow-run, so /proc, the
// cgroup files and signals to processes this one did not spawn go through libc, with
// --allow-ffi scoped to libc's one file.

import { lazySymbols } from "../session_db/sqlite/_lazy_symbols.ts";

const SYMBOLS = {
  // open(2) and prctl(2) are variadic in C; every argument here is an integer or a
  // pointer, which the x86-64 and AArch64 calling conventions pass alike.
  open: { parameters: ["buffer", "i32", "u32"], result: "i32" },
  read: { parameters: ["i32", "buffer", "usize"], result: "isize" },
  write: { parameters: ["i32", "buffer", "usize"], result: "isize" },
  close: { parameters: ["i32"], result: "i32" },
  getdents64: { parameters: ["i32", "buffer", "usize"], result: "isize" },
  mkdir: { parameters: ["buffer", "u32"], result: "i32" },
  rmdir: { parameters: ["buffer"], result: "i32" },
  kill: { parameters: ["i32", "i32"], result: "i32" },
  prctl: { parameters: ["i32", "u64", "u64", "u64", "u64"], result: "i32" },
  syscall: { parameters: ["i64", "i64", "i64"], result: "i64" },
  poll: { parameters: ["buffer", "u64", "i32"], result: "i32" },
  memcpy: { parameters: ["buffer", "usize", "usize"], result: "usize" },
  __errno_location: { parameters: [], result: "usize" },
} as const;

/**
 * What every child's guard calls as it starts, and what reads errno: binding a symbol on
 * first use makes system calls, which would overwrite the errno of the call that failed.
 * The rest is bound on first use.
 */
const GUARD_SYMBOLS = ["open", "read", "close", "prctl", "kill", "memcpy", "__errno_location"];

/** The libc functions the tree machinery calls. */
export type LibcSymbols = Deno.DynamicLibrary<typeof SYMBOLS>["symbols"];

/** Signal numbers (the same on x86-64 and AArch64 Linux). */
export const SIGNALS = { SIGKILL: 9, SIGCONT: 18, SIGSTOP: 19 } as const;

const O_RDONLY = 0;
const O_WRONLY = 1;
const O_DIRECTORY = 0o200000;
const O_CLOEXEC = 0o2000000;
const EINTR = 4;
const SYS_PIDFD_OPEN = 434;
const PR_SET_PDEATHSIG = 1;
const PR_SET_CHILD_SUBREAPER = 36;
const POLLIN = 1;

/** Where glibc's libc usually is; the first that exists is the one to load. */
const CANDIDATES = [
  "/lib/x86_64-linux-gnu/libc.so.6",
  "/usr/lib/x86_64-linux-gnu/libc.so.6",
  "/lib/aarch64-linux-gnu/libc.so.6",
  "/usr/lib/aarch64-linux-gnu/libc.so.6",
  "/lib64/libc.so.6",
  "/usr/lib64/libc.so.6",
  "/usr/lib/libc.so.6",
  "/lib/libc.so.6",
];

let found: string | null | undefined;

/**
 * The path of glibc's libc on this machine (the file `--allow-ffi` names), or
 * `undefined` off Linux or where none of the usual places holds it.
 */
export function libcPath(): string | undefined {
  if (found !== undefined) return found ?? undefined;
  found = null;
  if (Deno.build.os !== "linux") return undefined;
  for (const path of CANDIDATES) {
    try {
      if (Deno.statSync(path).isFile) {
        found = path;
        break;
      }
    } catch {
      // Missing or unreadable: try the next place.
    }
  }
  return found ?? undefined;
}

const opened = new Map<string, LibcSymbols | null>();

/**
 * libc's functions, loaded once from `path` (default {@linkcode libcPath}); `undefined`
 * when it cannot be loaded (no libc found, or FFI to it not permitted).
 */
export function libc(path: string | undefined = libcPath()): LibcSymbols | undefined {
  if (!path) return undefined;
  let symbols = opened.get(path);
  if (symbols === undefined) {
    try {
      symbols = lazySymbols(path, SYMBOLS, {
        eager: GUARD_SYMBOLS,
        onError: (name, error) =>
          new Error(`Cannot bind ${name} from libc at ${path}`, { cause: error }),
      });
    } catch {
      symbols = null;
    }
    opened.set(path, symbols);
  }
  return symbols ?? undefined;
}

/** The calling thread's errno. */
export function errno(c: LibcSymbols): number {
  const out = new Int32Array(1);
  c.memcpy(out, c.__errno_location(), 4n);
  return out[0]!;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A NUL-terminated copy of `text`, for a C string argument. */
export function cString(text: string): Uint8Array<ArrayBuffer> {
  const bytes = encoder.encode(text);
  const out = new Uint8Array(bytes.length + 1);
  out.set(bytes);
  return out;
}

/** Opens `path`, retrying on EINTR; the descriptor or -1. */
function openRetry(c: LibcSymbols, path: string, flags: number): number {
  const name = cString(path);
  for (;;) {
    const fd = c.open(name, flags | O_CLOEXEC, 0);
    if (fd >= 0 || errno(c) !== EINTR) return fd;
  }
}

/** The whole contents of a (small, kernel-made) file, or `undefined` when unreadable. */
export function readBytes(c: LibcSymbols, path: string): Uint8Array | undefined {
  const fd = openRetry(c, path, O_RDONLY);
  if (fd < 0) return undefined;
  try {
    const chunks: Uint8Array[] = [];
    let total = 0;
    for (;;) {
      const buffer = new Uint8Array(16 * 1024);
      const n = Number(c.read(fd, buffer, BigInt(buffer.length)));
      if (n < 0) {
        if (errno(c) === EINTR) continue;
        return undefined;
      }
      if (n === 0) break;
      chunks.push(buffer.subarray(0, n));
      total += n;
    }
    const out = new Uint8Array(total);
    let offset = 0;
    for (const chunk of chunks) {
      out.set(chunk, offset);
      offset += chunk.length;
    }
    return out;
  } finally {
    c.close(fd);
  }
}

/** {@linkcode readBytes} as text. */
export function readText(c: LibcSymbols, path: string): string | undefined {
  const bytes = readBytes(c, path);
  return bytes === undefined ? undefined : decoder.decode(bytes);
}

/** Writes `text` to an existing file in one call (a cgroup control file); 0 or the errno. */
export function writeText(c: LibcSymbols, path: string, text: string): number {
  const fd = openRetry(c, path, O_WRONLY);
  if (fd < 0) return errno(c);
  try {
    const bytes = encoder.encode(text);
    const n = Number(c.write(fd, bytes, BigInt(bytes.length)));
    return n === bytes.length ? 0 : errno(c) || -1;
  } finally {
    c.close(fd);
  }
}

/** The names in a folder (without `.` and `..`), or `undefined` when it cannot be read. */
export function listDir(c: LibcSymbols, path: string): string[] | undefined {
  const fd = openRetry(c, path, O_RDONLY | O_DIRECTORY);
  if (fd < 0) return undefined;
  try {
    const names: string[] = [];
    const buffer = new Uint8Array(64 * 1024);
    const view = new DataView(buffer.buffer);
    for (;;) {
      const n = Number(c.getdents64(fd, buffer, BigInt(buffer.length)));
      if (n < 0 && errno(c) === EINTR) continue;
      if (n <= 0) return n < 0 ? undefined : names;
      // struct linux_dirent64: d_ino u64, d_off i64, d_reclen u16, d_type u8, d_name.
      for (let offset = 0; offset < n;) {
        const length = view.getUint16(offset + 16, true);
        const start = offset + 19;
        const end = buffer.indexOf(0, start);
        const name = decoder.decode(buffer.subarray(start, end < 0 ? offset + length : end));
        if (name !== "." && name !== "..") names.push(name);
        offset += length;
      }
    }
  } finally {
    c.close(fd);
  }
}

/** Creates a folder (mode 0755); 0 or the errno. */
export function makeDir(c: LibcSymbols, path: string): number {
  return c.mkdir(cString(path), 0o755) === 0 ? 0 : errno(c);
}

/** Removes an empty folder (or a cgroup); 0 or the errno. */
export function removeDir(c: LibcSymbols, path: string): number {
  return c.rmdir(cString(path)) === 0 ? 0 : errno(c);
}

/** Sends `signal` to `pid`; whether it was delivered (false when the process is gone). */
export function sendSignal(c: LibcSymbols, pid: number, signal: number): boolean {
  return pid > 0 && c.kill(pid, signal) === 0;
}

/** Asks the kernel to send `signal` to this process when the thread that spawned it dies. */
export function setParentDeathSignal(c: LibcSymbols, signal: number): boolean {
  return c.prctl(PR_SET_PDEATHSIG, BigInt(signal), 0n, 0n, 0n) === 0;
}

/** Makes this process the reaper of its orphaned descendants (they stay in its tree). */
export function becomeSubreaper(c: LibcSymbols): boolean {
  return c.prctl(PR_SET_CHILD_SUBREAPER, 1n, 0n, 0n, 0n) === 0;
}

/** A pidfd for `pid` (it becomes readable when that very process exits), or -1. */
export function openPidfd(c: LibcSymbols, pid: number): number {
  return Number(c.syscall(BigInt(SYS_PIDFD_OPEN), BigInt(pid), 0n));
}

/** Blocks until `fd` is readable (a pidfd: its process exited). */
export function waitReadable(c: LibcSymbols, fd: number): void {
  // struct pollfd: int fd, short events, short revents.
  const pollfd = new Uint8Array(8);
  const view = new DataView(pollfd.buffer);
  view.setInt32(0, fd, true);
  view.setInt16(4, POLLIN, true);
  for (;;) {
    const n = c.poll(pollfd, 1n, -1);
    if (n > 0 || (n < 0 && errno(c) !== EINTR)) return;
  }
}
