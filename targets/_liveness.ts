// Whether a process is alive, for a store that frees a dead holder's lock and a dead
// owner's obligations at once: `kill(pid, 0)` from the C library, through FFI (Deno's
// `Deno.kill` would need --allow-run, and /proc needs every permission). The library is
// found in the parent (`libcPath`, for the children's `--allow-ffi`); a child opens the
// first of the same paths it is allowed to.

/** Where the C library usually is (glibc on Debian/Ubuntu, Fedora, Arch, Alpine; macOS). */
const CANDIDATES = [
  "/lib/x86_64-linux-gnu/libc.so.6",
  "/usr/lib/x86_64-linux-gnu/libc.so.6",
  "/lib/aarch64-linux-gnu/libc.so.6",
  "/usr/lib/aarch64-linux-gnu/libc.so.6",
  "/lib64/libc.so.6",
  "/usr/lib64/libc.so.6",
  "/usr/lib/libc.so.6",
  "/lib/libc.musl-x86_64.so.1",
  "/usr/lib/libSystem.B.dylib",
];

const ESRCH = 3;

/** The C library's path on this machine, or `undefined` (needs read access to look). */
export function libcPath(): string | undefined {
  for (const path of CANDIDATES) {
    try {
      if (Deno.statSync(path).isFile) return path;
    } catch {
      // Not here, or not allowed to look: the next one.
    }
  }
  return undefined;
}

const SYMBOLS = {
  kill: { parameters: ["i32", "i32"], result: "i32" },
  memcpy: { parameters: ["buffer", "pointer", "usize"], result: "pointer" },
  open: { parameters: ["buffer", "i32"], result: "i32" },
  read: { parameters: ["i32", "buffer", "usize"], result: "isize" },
  close: { parameters: ["i32"], result: "i32" },
} as const;
const ERRNO = {
  linux: { __errno_location: { parameters: [], result: "pointer" } },
  darwin: { __error: { parameters: [], result: "pointer" } },
} as const;

type Libc = {
  kill(pid: number, signal: number): number;
  errno(): number;
  /** The thread group of an id, from /proc (read through libc), if there is one. */
  threadGroup(pid: number): number | undefined;
};
let libc: Libc | null | undefined;

function openLibc(): Libc | null {
  const errnoSymbol = Deno.build.os === "darwin" ? ERRNO.darwin : ERRNO.linux;
  for (const path of CANDIDATES) {
    try {
      const lib = Deno.dlopen(path, { ...SYMBOLS, ...errnoSymbol });
      const location = "__error" in lib.symbols
        ? () => (lib.symbols as { __error(): Deno.PointerValue }).__error()
        : () => (lib.symbols as { __errno_location(): Deno.PointerValue }).__errno_location();
      return {
        kill: (pid, signal) => lib.symbols.kill(pid, signal),
        threadGroup(pid) {
          const fd = lib.symbols.open(new TextEncoder().encode(`/proc/${pid}/status\0`), 0);
          if (fd < 0) return undefined;
          try {
            const buffer = new Uint8Array(4096);
            const n = Number(lib.symbols.read(fd, buffer, BigInt(buffer.length)));
            const text = new TextDecoder().decode(buffer.subarray(0, Math.max(n, 0)));
            const tgid = /^Tgid:\s*(\d+)$/m.exec(text)?.[1];
            return tgid === undefined ? undefined : Number(tgid);
          } finally {
            lib.symbols.close(fd);
          }
        },
        errno() {
          const bytes = new Uint8Array(4);
          lib.symbols.memcpy(bytes, location(), 4n);
          return new DataView(bytes.buffer).getInt32(0, true);
        },
      };
    } catch {
      // Not there, or not allowed: the next one.
    }
  }
  return null;
}

/**
 * Whether the process `pid` exists (a zombie counts until reaped; the id of a thread of
 * another process does not). Where the C library
 * cannot be opened, alive: a lock is then freed by its expiry only, never by a guess.
 */
export function processAlive(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  if (pid === Deno.pid) return true;
  libc ??= openLibc();
  if (!libc) return true;
  if (libc.kill(pid, 0) !== 0 && libc.errno() === ESRCH) return false;
  // kill(id, 0) succeeds for the id of another process's thread too: that is no process.
  const group = libc.threadGroup(pid);
  return group === undefined || group === pid;
}
