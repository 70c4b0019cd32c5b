// The FFI symbol table and library resolution. Handles and C strings cross the
// boundary as `usize` integers, never as pointer objects: pointer views need an
// unscoped `--allow-ffi`, and children run with `--allow-ffi` scoped to the library.
// C strings are copied out with libc's `strlen` and `memcpy`, which `dlsym` finds
// through the SQLite library's own dependency on libc.

const symbols = {
  sqlite3_libversion: { parameters: [], result: "usize" },
  // Variadic in C; called once with two ints, which every supported ABI passes as in a
  // fixed-argument call except Apple's arm64 (see configureLibrary).
  sqlite3_config: { parameters: ["i32", "i32"], result: "i32" },
  sqlite3_open_v2: { parameters: ["buffer", "buffer", "i32", "buffer"], result: "i32" },
  sqlite3_close_v2: { parameters: ["usize"], result: "i32" },
  sqlite3_errmsg: { parameters: ["usize"], result: "usize" },
  sqlite3_errstr: { parameters: ["i32"], result: "usize" },
  sqlite3_extended_errcode: { parameters: ["usize"], result: "i32" },
  sqlite3_extended_result_codes: { parameters: ["usize", "i32"], result: "i32" },
  sqlite3_exec: {
    parameters: ["usize", "buffer", "usize", "usize", "buffer"],
    result: "i32",
  },
  sqlite3_busy_timeout: { parameters: ["usize", "i32"], result: "i32" },
  sqlite3_prepare_v2: {
    parameters: ["usize", "buffer", "i32", "buffer", "usize"],
    result: "i32",
  },
  sqlite3_step: { parameters: ["usize"], result: "i32" },
  sqlite3_reset: { parameters: ["usize"], result: "i32" },
  sqlite3_clear_bindings: { parameters: ["usize"], result: "i32" },
  sqlite3_finalize: { parameters: ["usize"], result: "i32" },
  sqlite3_bind_parameter_count: { parameters: ["usize"], result: "i32" },
  sqlite3_bind_parameter_name: { parameters: ["usize", "i32"], result: "usize" },
  sqlite3_bind_int64: { parameters: ["usize", "i32", "i64"], result: "i32" },
  sqlite3_bind_double: { parameters: ["usize", "i32", "f64"], result: "i32" },
  sqlite3_bind_text: {
    parameters: ["usize", "i32", "buffer", "i32", "isize"],
    result: "i32",
  },
  sqlite3_bind_blob: {
    parameters: ["usize", "i32", "buffer", "i32", "isize"],
    result: "i32",
  },
  sqlite3_bind_null: { parameters: ["usize", "i32"], result: "i32" },
  sqlite3_column_count: { parameters: ["usize"], result: "i32" },
  sqlite3_column_name: { parameters: ["usize", "i32"], result: "usize" },
  sqlite3_column_type: { parameters: ["usize", "i32"], result: "i32" },
  sqlite3_column_int64: { parameters: ["usize", "i32"], result: "i64" },
  sqlite3_column_double: { parameters: ["usize", "i32"], result: "f64" },
  sqlite3_column_text: { parameters: ["usize", "i32"], result: "usize" },
  sqlite3_column_blob: { parameters: ["usize", "i32"], result: "usize" },
  sqlite3_column_bytes: { parameters: ["usize", "i32"], result: "i32" },
  sqlite3_changes: { parameters: ["usize"], result: "i32" },
  sqlite3_total_changes: { parameters: ["usize"], result: "i32" },
  sqlite3_last_insert_rowid: { parameters: ["usize"], result: "i64" },
  sqlite3_get_autocommit: { parameters: ["usize"], result: "i32" },
  sqlite3_free: { parameters: ["usize"], result: "void" },
  strlen: { parameters: ["usize"], result: "usize" },
  memcpy: { parameters: ["buffer", "usize", "usize"], result: "usize" },
  kill: { parameters: ["i32", "i32"], result: "i32" },
  // Reading /proc/<pid>/status for liveness (session_db/process.ts), without --allow-read.
  open: { parameters: ["buffer", "i32"], result: "i32", optional: true },
  read: { parameters: ["i32", "buffer", "usize"], result: "isize", optional: true },
  close: { parameters: ["i32"], result: "i32", optional: true },
  __errno_location: { parameters: [], result: "usize", optional: true },
  __error: { parameters: [], result: "usize", optional: true },
} as const satisfies Deno.ForeignLibraryInterface;

/** The loaded library's symbols. */
export type SqliteSymbols = Deno.DynamicLibrary<typeof symbols>["symbols"];

import { SQLITE_CONFIG_MEMSTATUS } from "./constants.ts";
import { lazySymbols } from "./_lazy_symbols.ts";
import { explicitLibraryPath, libraryCandidates, SqliteLibraryError } from "./library.ts";
import { describeLoadFailure } from "./_load_failure.ts";

/** Bound when the library loads: a library that lacks one is not SQLite. */
const EAGER = [
  "sqlite3_libversion",
  "sqlite3_config",
  "sqlite3_open_v2",
  "sqlite3_close_v2",
  "sqlite3_extended_result_codes",
  "sqlite3_busy_timeout",
  "sqlite3_exec",
  "sqlite3_prepare_v2",
  "sqlite3_step",
  "sqlite3_reset",
  "sqlite3_finalize",
  "sqlite3_bind_parameter_count",
  "sqlite3_bind_text",
  "sqlite3_bind_null",
  "sqlite3_bind_double",
  "sqlite3_column_count",
  "sqlite3_column_name",
  "sqlite3_column_type",
  "sqlite3_column_double",
  "sqlite3_column_text",
  "sqlite3_column_bytes",
  "sqlite3_changes",
  "sqlite3_last_insert_rowid",
  "strlen",
  "memcpy",
];

/** The loaded SQLite library: where it came from and its symbols. */
export interface LoadedLibrary {
  /** The path that was opened. */
  path: string;
  /** The symbols. */
  symbols: SqliteSymbols;
}

let loaded: LoadedLibrary | undefined;

/**
 * Turns off SQLite's memory statistics before the library initializes, as
 * better-sqlite3 and node:sqlite builds do: with them on, every allocation and free
 * takes a global mutex. `sqlite3_memory_used()` and the soft heap limit stop counting;
 * nothing here uses them. A library another copy of this module already initialized
 * answers SQLITE_MISUSE and keeps its setting.
 */
function configureLibrary(sym: SqliteSymbols): void {
  if (Deno.build.os === "darwin" && Deno.build.arch === "aarch64") return; // variadic ints go on the stack there
  sym.sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

/**
 * Loads SQLite once per process: `DENO_SQLITE_PATH` when set, else the system library.
 * Throws {@linkcode SqliteLibraryError} naming both when neither loads.
 */
export function loadLibrary(): LoadedLibrary {
  if (loaded) return loaded;
  const failures: string[] = [];
  let lastError: unknown;
  for (const path of libraryCandidates()) {
    try {
      const bound = lazySymbols(path, symbols, {
        eager: EAGER,
        onError: (_name, error) => loadError(describeLoadFailure(path, error), error),
      });
      configureLibrary(bound);
      loaded = { path, symbols: bound };
      return loaded;
    } catch (error) {
      lastError = error;
      failures.push(describeLoadFailure(path, error));
    }
  }
  throw loadError(failures.length ? failures.join("; ") : "no system libsqlite3 found", lastError);
}

/** Why SQLite could not be loaded (`detail`), and how to fix it. */
function loadError(detail: string, cause: unknown): SqliteLibraryError {
  const install =
    "install SQLite (Debian/Ubuntu: apt-get install libsqlite3-0; macOS: brew install sqlite)";
  const fix = explicitLibraryPath()
    ? `DENO_SQLITE_PATH is set, so the system library was not tried: point DENO_SQLITE_PATH to a readable SQLite shared library, or unset it to use the system libsqlite3 (to get one, ${install})`
    : `${install}, or set DENO_SQLITE_PATH to a libsqlite3 shared library`;
  return new SqliteLibraryError(`Cannot load SQLite library: ${detail}; ${fix}`, { cause });
}

const decoder = new TextDecoder();

/** A non-NULL pointer for zero-length text, blobs and SQL. */
export const EMPTY = new Uint8Array(1);

/** An integer as a number while it is safe, else as a bigint (64-bit values stay exact). */
export function toNumber(value: number | bigint): number | bigint {
  if (typeof value === "number") return value;
  return value >= -9007199254740991n && value <= 9007199254740991n ? Number(value) : value;
}

/** Copies `length` bytes at address `address` out of foreign memory. */
export function copyBytes(sym: SqliteSymbols, address: bigint, length: number): Uint8Array {
  const out = new Uint8Array(length);
  if (length > 0 && address !== 0n) sym.memcpy(out, address, BigInt(length));
  return out;
}

/** Reads a NUL-terminated UTF-8 string at `address` ("" for NULL). */
export function readCString(sym: SqliteSymbols, address: bigint): string {
  if (address === 0n) return "";
  const length = Number(sym.strlen(address));
  return readText(sym, address, length);
}

// One reused buffer for text read out of SQLite: a fresh Uint8Array per value (allocated,
// then handed to FFI) cost ~0.5 us per TEXT column.
let textScratch = new Uint8Array(4096);
const SHORT_TEXT = 48;

/**
 * Writes a short ASCII string's bytes (its UTF-8) into `out` and returns their count; -1
 * when it is longer than SHORT_TEXT or not ASCII. Like reading, encoding ids and names in
 * JS costs less than TextEncoder's op.
 */
export function encodeShortAscii(value: string, out: Uint8Array): number {
  const length = value.length;
  if (length > SHORT_TEXT) return -1;
  for (let i = 0; i < length; i++) {
    const unit = value.charCodeAt(i);
    if (unit > 0x7f) return -1;
    out[i] = unit;
  }
  return length;
}

/** Decodes `length` bytes of UTF-8 at `address` (through a reused scratch buffer). */
export function readText(sym: SqliteSymbols, address: bigint, length: number): string {
  if (length === 0 || address === 0n) return "";
  // Values over 1 MiB get their own buffer so the scratch never pins megabytes.
  if (length > 1 << 20) return decoder.decode(copyBytes(sym, address, length));
  if (length > textScratch.length) {
    textScratch = new Uint8Array(Math.min(1 << 20, Math.max(length, textScratch.length * 2)));
  }
  sym.memcpy(textScratch, address, BigInt(length));
  // Short ASCII text (ids, roles, names) is built in JS: TextDecoder's op costs more than
  // the copy for a handful of bytes.
  if (length <= SHORT_TEXT) {
    const bytes = textScratch;
    let ascii = true;
    for (let i = 0; i < length; i++) {
      if (bytes[i]! > 0x7f) {
        ascii = false;
        break;
      }
    }
    if (ascii) {
      return String.fromCharCode.apply(null, bytes.subarray(0, length) as unknown as number[]);
    }
  }
  return decoder.decode(textScratch.subarray(0, length));
}
