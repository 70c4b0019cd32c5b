/**
 * A recording VFS for the power-loss tier: a SQLite VFS written in TypeScript with
 * `Deno.UnsafeCallback` that wraps the default (`unix`) VFS and appends to a log every
 * operation that decides what survives a power loss: each `xWrite` (offset and a copy of
 * the bytes), `xTruncate`, `xSync`, `xDelete` with its directory-sync flag, and each
 * open and close of a database, journal or WAL file. Each record is written with one
 * `write` call after the real operation returned (a sync is recorded only once the real
 * sync completed), so the log survives a SIGKILL of the process, torn at most in its last
 * record. `crash_states.ts` turns a baseline copy plus the log into the states a power
 * loss could leave.
 *
 * Layout ("prefix"): the VFS copies the default VFS's struct and replaces `xOpen` and
 * `xDelete`. The real `xOpen` fills the file object; the VFS then swaps its method table
 * for a copy of the real one in which only `xClose`, `xWrite`, `xTruncate` and `xSync`
 * enter JavaScript. Reads, locks, the WAL's shared-memory methods and everything else
 * stay the real C functions, so WAL works and costs nothing extra. Temporary files are
 * not recorded (their content does not outlive the process).
 *
 * Requirements: an unscoped `--allow-ffi` (callbacks and pointer views need it; the
 * ordinary binding keeps working under `--allow-ffi=<library>` and never loads this
 * module); one SQLite library per process; synchronous FFI calls only (every call the
 * binding makes is). Every callback and every buffer SQLite holds a pointer to lives
 * until the process exits. A callback never throws into SQLite: an exception, or a
 * failure to log, returns an I/O error, so a run whose log is incomplete fails loudly
 * instead of being checked against a partial record.
 *
 * @example
 * ```ts ignore
 * import { installRecordingVfs } from "./recording_vfs.ts";
 * import { SessionDB } from "./session_db.ts";
 * const dir = Deno.makeTempDirSync();
 * installRecordingVfs({ log: `${dir}/vfs.log` }); // the default VFS from now on
 * const db = SessionDB.open(`${dir}/s.db`);
 * db.createSession("s1");
 * db.close();
 * ```
 *
 * @module
 */
import { loadLibrary } from "./sqlite/_ffi.ts";
import {
  SQLITE_CANTOPEN,
  SQLITE_IOERR_CLOSE,
  SQLITE_IOERR_DELETE,
  SQLITE_IOERR_FSYNC,
  SQLITE_IOERR_TRUNCATE,
  SQLITE_IOERR_WRITE,
  SQLITE_OK,
  SQLITE_OPEN_MAIN_DB,
  SQLITE_OPEN_MAIN_JOURNAL,
  SQLITE_OPEN_SUPER_JOURNAL,
  SQLITE_OPEN_WAL,
} from "./sqlite/constants.ts";
import { LogWriter, RecordKind } from "./_vfs_log.ts";

export { type LogRecord, readVfsLog, type VfsLog, VfsLogError } from "./_vfs_log.ts";

/** Options of {@linkcode installRecordingVfs}. */
export interface RecordingVfsOptions {
  /** The log file: created when missing, appended to otherwise. */
  log: string;
  /** The VFS's name (default `recording`). */
  name?: string;
  /**
   * Make it the process's default VFS, so that every connection records, a target's
   * own extra connections included (default `true`).
   */
  makeDefault?: boolean;
}

/** An installed recording VFS. */
export interface RecordingVfs {
  /** The name to pass as `vfs` when it is not the default. */
  readonly name: string;
  /** The log file. */
  readonly log: string;
  /** Records written so far. */
  readonly records: number;
}

/** Raised when the recording VFS cannot be installed. */
export class RecordingVfsError extends Error {
  /** Creates the error. */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "RecordingVfsError";
  }
}

// File kinds whose content outlives the process; temporary files are left alone.
const RECORDED = SQLITE_OPEN_MAIN_DB | SQLITE_OPEN_MAIN_JOURNAL | SQLITE_OPEN_SUPER_JOURNAL |
  SQLITE_OPEN_WAL;

// sqlite3_vfs: sizes by iVersion, and the offsets this shim touches.
const VFS_SIZE = [0, 136, 144, 168];
const VFS_PNEXT = 16;
const VFS_ZNAME = 24;
const VFS_XOPEN = 40;
const VFS_XDELETE = 48;
// sqlite3_io_methods: sizes by iVersion (v2 adds the shm methods WAL needs).
const METHODS_SIZE = [0, 104, 136, 152];
const IO_XCLOSE = 8;
const IO_XWRITE = 24;
const IO_XTRUNCATE = 32;
const IO_XSYNC = 40;

const OPEN_DEF = {
  parameters: ["pointer", "pointer", "pointer", "i32", "pointer"],
  result: "i32",
} as const;
const DELETE_DEF = { parameters: ["pointer", "pointer", "i32"], result: "i32" } as const;
const CLOSE_DEF = { parameters: ["pointer"], result: "i32" } as const;
const WRITE_DEF = { parameters: ["pointer", "pointer", "i32", "i64"], result: "i32" } as const;
const TRUNCATE_DEF = { parameters: ["pointer", "i64"], result: "i32" } as const;
const SYNC_DEF = { parameters: ["pointer", "i32"], result: "i32" } as const;

interface RealMethods {
  close: Deno.UnsafeFnPointer<typeof CLOSE_DEF>;
  write: Deno.UnsafeFnPointer<typeof WRITE_DEF>;
  truncate: Deno.UnsafeFnPointer<typeof TRUNCATE_DEF>;
  sync: Deno.UnsafeFnPointer<typeof SYNC_DEF>;
}

interface OpenFile {
  id: number;
  real: RealMethods;
}

const address = (pointer: Deno.PointerValue): bigint =>
  pointer === null ? 0n : BigInt(Deno.UnsafePointer.value(pointer));

function pokePointer(target: Deno.PointerObject, offset: number, value: bigint): void {
  new BigUint64Array(Deno.UnsafePointerView.getArrayBuffer(target, 8, offset))[0] = value;
}

function fnPointer<T extends Deno.ForeignFunction>(
  view: Deno.UnsafePointerView,
  offset: number,
  definition: T,
): Deno.UnsafeFnPointer<T> {
  const pointer = view.getPointer(offset);
  if (pointer === null) {
    throw new RecordingVfsError(
      `Cannot install the recording VFS: the default VFS has no function at offset ${offset} (use a SQLite built with the unix VFS)`,
    );
  }
  return new Deno.UnsafeFnPointer(pointer as Deno.PointerObject<never>, definition);
}

class Recorder implements RecordingVfs {
  readonly name: string;
  readonly log: string;
  #log: LogWriter;
  // Everything SQLite may point into or call, kept for the life of the process.
  #keep: unknown[] = [];
  #tables = new Map<bigint, { table: bigint; real: RealMethods }>();
  #open = new Map<bigint, OpenFile>();
  #nextFileId = 1;
  #callbacks!: {
    close: Deno.UnsafeCallback<typeof CLOSE_DEF>;
    write: Deno.UnsafeCallback<typeof WRITE_DEF>;
    truncate: Deno.UnsafeCallback<typeof TRUNCATE_DEF>;
    sync: Deno.UnsafeCallback<typeof SYNC_DEF>;
  };

  constructor(options: RecordingVfsOptions) {
    this.name = options.name ?? "recording";
    this.log = options.log;
    this.#log = new LogWriter(options.log);
    const { symbols } = loadLibrary();
    const realAddress = symbols.sqlite3_vfs_find(null);
    if (realAddress === 0n) {
      throw new RecordingVfsError(
        "Cannot install the recording VFS: SQLite has no default VFS (use a SQLite built with the unix VFS)",
      );
    }
    const realVfs = Deno.UnsafePointer.create(realAddress)!;
    const realView = new Deno.UnsafePointerView(realVfs);
    const version = realView.getInt32(0);
    const size = VFS_SIZE[Math.min(version, 3)] ?? 0;
    if (size === 0) {
      throw new RecordingVfsError(
        `Cannot install the recording VFS: the default VFS has version ${version} (use SQLite 3.7 or later)`,
      );
    }
    const realOpen = fnPointer(realView, VFS_XOPEN, OPEN_DEF);
    const realDelete = fnPointer(realView, VFS_XDELETE, DELETE_DEF);

    this.#callbacks = {
      close: new Deno.UnsafeCallback(CLOSE_DEF, (file) => this.#close(file)),
      write: new Deno.UnsafeCallback(
        WRITE_DEF,
        (file, data, amount, offset) => this.#write(file, data, amount, offset),
      ),
      truncate: new Deno.UnsafeCallback(
        TRUNCATE_DEF,
        (file, size) => this.#truncate(file, size),
      ),
      sync: new Deno.UnsafeCallback(SYNC_DEF, (file, flags) => this.#sync(file, flags)),
    };
    const open = new Deno.UnsafeCallback(OPEN_DEF, (_vfs, name, file, flags, outFlags) => {
      try {
        const rc = realOpen.call(realVfs, name, file, flags, outFlags);
        if (rc !== SQLITE_OK || file === null) {
          if (file !== null) pokePointer(file, 0, 0n); // SQLite must not call xClose
          return rc;
        }
        if (name === null || (flags & RECORDED) === 0) return rc;
        try {
          this.#adopt(file, Deno.UnsafePointerView.getCString(name), flags);
        } catch (error) {
          // Not recorded means not checkable: close it and refuse the open. The real
          // method table is still in place (it is swapped last).
          const methods = new Deno.UnsafePointerView(file).getPointer(0);
          if (methods !== null) {
            fnPointer(new Deno.UnsafePointerView(methods), IO_XCLOSE, CLOSE_DEF).call(file);
          }
          pokePointer(file, 0, 0n);
          console.error(`recording VFS: open refused: ${String(error)}`);
          return SQLITE_CANTOPEN;
        }
        return rc;
      } catch (error) {
        console.error(`recording VFS: xOpen failed: ${String(error)}`);
        return SQLITE_CANTOPEN;
      }
    });
    const del = new Deno.UnsafeCallback(DELETE_DEF, (_vfs, name, syncDir) => {
      try {
        const rc = realDelete.call(realVfs, name, syncDir);
        if (rc !== SQLITE_OK || name === null) return rc;
        this.#log.append(
          RecordKind.delete,
          0,
          0,
          syncDir ? 1 : 0,
          Deno.UnsafePointerView.getCString(name),
        );
        return rc;
      } catch (error) {
        console.error(`recording VFS: xDelete failed: ${String(error)}`);
        return SQLITE_IOERR_DELETE;
      }
    });

    const vfs = new Uint8Array(VFS_SIZE[3]!);
    Deno.UnsafePointerView.copyInto(realVfs, vfs.subarray(0, size));
    const nameBytes = new TextEncoder().encode(this.name + "\0");
    const fields = new DataView(vfs.buffer);
    fields.setBigUint64(VFS_PNEXT, 0n, true);
    fields.setBigUint64(VFS_ZNAME, address(Deno.UnsafePointer.of(nameBytes)), true);
    fields.setBigUint64(VFS_XOPEN, address(open.pointer), true);
    fields.setBigUint64(VFS_XDELETE, address(del.pointer), true);
    this.#keep.push(realVfs, realOpen, realDelete, open, del, vfs, nameBytes);
    const rc = symbols.sqlite3_vfs_register(
      address(Deno.UnsafePointer.of(vfs)),
      options.makeDefault === false ? 0 : 1,
    );
    if (rc !== SQLITE_OK) {
      throw new RecordingVfsError(
        `Cannot install the recording VFS: sqlite3_vfs_register returned ${rc}`,
      );
    }
  }

  /** Swaps the real method table of a freshly opened file for the recording copy. */
  #adopt(file: Deno.PointerObject, path: string, flags: number): void {
    const methods = new Deno.UnsafePointerView(file).getPointer(0);
    if (methods === null) return;
    const key = address(methods);
    let entry = this.#tables.get(key);
    if (!entry) {
      const view = new Deno.UnsafePointerView(methods);
      const version = view.getInt32(0);
      const size = METHODS_SIZE[Math.min(version, 3)] ?? 0;
      if (version < 2) {
        throw new RecordingVfsError(
          `the file's io_methods have version ${version}; WAL needs 2 or more`,
        );
      }
      const table = new Uint8Array(METHODS_SIZE[3]!);
      Deno.UnsafePointerView.copyInto(methods, table.subarray(0, size));
      const real: RealMethods = {
        close: fnPointer(view, IO_XCLOSE, CLOSE_DEF),
        write: fnPointer(view, IO_XWRITE, WRITE_DEF),
        truncate: fnPointer(view, IO_XTRUNCATE, TRUNCATE_DEF),
        sync: fnPointer(view, IO_XSYNC, SYNC_DEF),
      };
      const fields = new DataView(table.buffer);
      fields.setBigUint64(IO_XCLOSE, address(this.#callbacks.close.pointer), true);
      fields.setBigUint64(IO_XWRITE, address(this.#callbacks.write.pointer), true);
      fields.setBigUint64(IO_XTRUNCATE, address(this.#callbacks.truncate.pointer), true);
      fields.setBigUint64(IO_XSYNC, address(this.#callbacks.sync.pointer), true);
      this.#keep.push(table, real);
      entry = { table: address(Deno.UnsafePointer.of(table)), real };
      this.#tables.set(key, entry);
    }
    const id = this.#nextFileId++;
    this.#log.append(RecordKind.open, id, flags, 0, path);
    this.#open.set(address(file), { id, real: entry.real });
    pokePointer(file, 0, entry.table);
  }

  /** Records written so far. */
  get records(): number {
    return this.#log.records;
  }

  #close(file: Deno.PointerValue): number {
    try {
      const open = this.#open.get(address(file));
      if (!open) return SQLITE_IOERR_CLOSE;
      const rc = open.real.close.call(file);
      this.#open.delete(address(file));
      this.#log.append(RecordKind.close, open.id, 0, 0);
      return rc;
    } catch (error) {
      console.error(`recording VFS: xClose failed: ${String(error)}`);
      return SQLITE_IOERR_CLOSE;
    }
  }

  #write(
    file: Deno.PointerValue,
    data: Deno.PointerValue,
    amount: number,
    offset: number | bigint,
  ): number {
    try {
      const open = this.#open.get(address(file));
      if (!open || data === null) return SQLITE_IOERR_WRITE;
      const rc = open.real.write.call(file, data, amount, BigInt(offset));
      if (rc !== SQLITE_OK) return rc;
      // SQLite reuses the buffer after the call: copy the bytes now, into the record.
      const payload = this.#log.reserve(RecordKind.write, open.id, Number(offset), 0, amount);
      Deno.UnsafePointerView.copyInto(data, payload);
      this.#log.commit();
      return rc;
    } catch (error) {
      console.error(`recording VFS: xWrite failed: ${String(error)}`);
      return SQLITE_IOERR_WRITE;
    }
  }

  #truncate(file: Deno.PointerValue, size: number | bigint): number {
    try {
      const open = this.#open.get(address(file));
      if (!open) return SQLITE_IOERR_TRUNCATE;
      const rc = open.real.truncate.call(file, BigInt(size));
      if (rc !== SQLITE_OK) return rc;
      this.#log.append(RecordKind.truncate, open.id, Number(size), 0);
      return rc;
    } catch (error) {
      console.error(`recording VFS: xTruncate failed: ${String(error)}`);
      return SQLITE_IOERR_TRUNCATE;
    }
  }

  #sync(file: Deno.PointerValue, flags: number): number {
    try {
      const open = this.#open.get(address(file));
      if (!open) return SQLITE_IOERR_FSYNC;
      const rc = open.real.sync.call(file, flags);
      // Recorded only once the real sync returned: what it covers is on disk.
      if (rc !== SQLITE_OK) return rc;
      this.#log.append(RecordKind.sync, open.id, 0, flags & 0xff);
      return rc;
    } catch (error) {
      console.error(`recording VFS: xSync failed: ${String(error)}`);
      return SQLITE_IOERR_FSYNC;
    }
  }
}

let installed: Recorder | undefined;

/**
 * Registers the recording VFS (once per process; a second call with the same log
 * returns the same VFS).
 *
 * @param options The log file, the name, whether it becomes the default VFS.
 * @returns The installed VFS.
 * @throws {RecordingVfsError} When it is already installed with another log or name,
 * or the default VFS cannot be wrapped.
 * @example
 * ```ts ignore
 * import { installRecordingVfs } from "./recording_vfs.ts";
 * const vfs = installRecordingVfs({ log: "/tmp/run/vfs.log" });
 * console.log(vfs.name); // "recording"
 * ```
 */
export function installRecordingVfs(options: RecordingVfsOptions): RecordingVfs {
  if (installed) {
    if (installed.log === options.log && installed.name === (options.name ?? "recording")) {
      return installed;
    }
    throw new RecordingVfsError(
      `Cannot install the recording VFS for "${options.log}": it is already installed in this process for "${installed.log}" (use one log per process)`,
    );
  }
  try {
    installed = new Recorder(options);
  } catch (error) {
    if (error instanceof RecordingVfsError) throw error;
    const detail = error instanceof Error ? error.message : String(error);
    const fix = error instanceof Deno.errors.NotCapable
      ? "run with an unscoped --allow-ffi: callbacks and pointer views need it"
      : "check that the log's folder exists and is writable";
    throw new RecordingVfsError(`Cannot install the recording VFS: ${detail} (${fix})`, {
      cause: error,
    });
  }
  return installed;
}

/**
 * Installs the recording VFS as the default when `SESSION_DB_VFS_LOG` names a log file
 * (what the power-loss tier's children are preloaded with); does nothing otherwise.
 *
 * @returns The installed VFS, or `undefined` when the variable is unset.
 * @example
 * ```ts ignore
 * import { installRecordingVfsFromEnv } from "./recording_vfs.ts";
 * installRecordingVfsFromEnv();
 * ```
 */
export function installRecordingVfsFromEnv(): RecordingVfs | undefined {
  const log = Deno.env.get("SESSION_DB_VFS_LOG");
  if (!log) return undefined;
  return installRecordingVfs({ log });
}
