// The JSON-lines log opened, written, cut and synced by raw system calls (libc's
// `syscall(2)`, through FFI): no libc wrapper the recorder interposes runs, as in a Go
// program or a static binary.
import { libcPath } from "../../../harness/_libc.ts";
import { SelfSyncingFile } from "./_self_syncing_file.ts";

/** glibc's shared library, where the suite's own FFI finds it. */
export const LIBC: string = libcPath() ?? "/lib/x86_64-linux-gnu/libc.so.6";

// x86_64 numbers; aarch64 has no open, only openat (56), and others of its own.
const X86 = { write: 1n, close: 3n, fdatasync: 75n, ftruncate: 77n, openat: 257n };
const ARM = { write: 64n, close: 57n, fdatasync: 83n, ftruncate: 46n, openat: 56n };
const NR = Deno.build.arch === "aarch64" ? ARM : X86;
const AT_FDCWD = -100n, O_RDWR = 2n, O_APPEND = 0x400n, O_CREAT = 0x40n, O_CLOEXEC = 0x80000n;

let libc:
  | Deno.DynamicLibrary<{
    syscall: { parameters: ["i64", "i64", "i64", "i64", "i64"]; result: "i64" };
  }>
  | undefined;

function syscall(n: bigint, a: bigint, b = 0n, c = 0n, d = 0n): number {
  libc ??= Deno.dlopen(LIBC, {
    syscall: { parameters: ["i64", "i64", "i64", "i64", "i64"], result: "i64" },
  });
  const r = Number(libc.symbols.syscall(n, a, b, c, d));
  // syscall(2) returns -1 and leaves the cause in errno, which FFI does not reach.
  if (r < 0) throw new Error(`System call ${n} failed`);
  return r;
}

function address(bytes: Uint8Array): bigint {
  return BigInt(Deno.UnsafePointer.value(Deno.UnsafePointer.of(bytes)));
}

/** A log file every change of which is a raw system call, each write synced. */
export class RawFile extends SelfSyncingFile {
  #fd: bigint;

  /** Opens (creating) `path` for appending. */
  constructor(path: string) {
    super(path);
    const name = new TextEncoder().encode(`${path}\0`);
    const flags = O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC;
    this.#fd = BigInt(syscall(NR.openat, AT_FDCWD, address(name), flags, 0o600n));
  }

  writeSync(bytes: Uint8Array): number {
    const written = syscall(NR.write, this.#fd, address(bytes), BigInt(bytes.length));
    syscall(NR.fdatasync, this.#fd);
    return written;
  }

  truncateSync(size: number): void {
    syscall(NR.ftruncate, this.#fd, BigInt(size));
    syscall(NR.fdatasync, this.#fd);
  }

  protected closeFile(): void {
    syscall(NR.close, this.#fd);
  }
}
