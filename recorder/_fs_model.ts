// The replay behind crash_states.ts: a folder's names and inodes, advanced record by
// record, keeping for each inode its durable content and its writes since the last sync,
// and for the folder the name changes not yet durable.
import { HarnessError } from "../harness/harness_error.ts";
import { type LogRecord, opensSynchronously, writesSynchronously } from "./log.ts";

/**
 * A set of files: name (relative to the watched folder) to content.
 *
 * @example
 * ```ts
 * import type { FileSet } from "./_fs_model.ts";
 * const files: FileSet = new Map([["store.db", new Uint8Array(4096)]]);
 * console.log(files.size); // 1
 * ```
 */
export type FileSet = Map<string, Uint8Array>;

/** A write or a size change. */
export type Op = { offset: number; data: Uint8Array } | { size: number } | {
  offset: number;
  zeros: number;
};

/** A growable byte buffer (a file's content). */
export class Bytes {
  #buffer: Uint8Array;
  length: number;

  constructor(initial?: Uint8Array) {
    this.#buffer = initial ? initial.slice() : new Uint8Array(0);
    this.length = this.#buffer.length;
  }

  #reserve(size: number): void {
    if (size <= this.#buffer.length) return;
    const next = new Uint8Array(Math.max(size, this.#buffer.length * 2, 4096));
    next.set(this.#buffer.subarray(0, this.length));
    this.#buffer = next;
  }

  apply(op: Op): void {
    if ("size" in op) {
      if (op.size > this.length) {
        this.#reserve(op.size);
        this.#buffer.fill(0, this.length, op.size);
      }
      this.length = op.size;
      return;
    }
    const length = "data" in op ? op.data.length : op.zeros;
    const end = op.offset + length;
    this.#reserve(end);
    // A write past the end leaves a hole of zeros, as a sparse file reads.
    if (op.offset > this.length) this.#buffer.fill(0, this.length, op.offset);
    if ("data" in op) this.#buffer.set(op.data, op.offset);
    else this.#buffer.fill(0, op.offset, end);
    if (end > this.length) this.length = end;
  }

  /** A copy with room for `capacity` bytes (writes up to it then copy nothing more). */
  clone(capacity = 0): Bytes {
    const copy = new Bytes();
    copy.#buffer = new Uint8Array(Math.max(capacity, this.length));
    copy.#buffer.set(this.view());
    copy.length = this.length;
    return copy;
  }

  view(): Uint8Array {
    return this.#buffer.subarray(0, this.length);
  }
}

/** A file or a folder. */
export interface Inode {
  id: number;
  dir: boolean;
  /** The folder's name (folders only; "" is the watched folder). */
  name: string;
  /** Content as of the last sync. */
  durable: Bytes;
  /** Writes and size changes since the last sync, in order, with their record's seq. */
  pending: { seq: number; op: Op }[];
  /** Content now (what a SIGKILL leaves). */
  current: Bytes;
  /**
   * Set once a sync of the file failed: the writes pending then were dropped, so the
   * content now is no longer the durable content plus the pending writes.
   */
  faulted: boolean;
}

/**
 * The errnos of a sync that reached the device and failed there (EIO, ENOSPC, EDQUOT):
 * its writes are dropped. Others (EBADF, EINVAL, EROFS) never started one.
 */
const WRITEBACK_ERRNOS = new Set([5, 28, 122]);

/** A name change not yet durable. */
export interface NameChange {
  seq: number;
  name: string;
  to: Inode | null;
}

/**
 * Raised when the log does not fit the model: the suite cannot judge the run (an ERROR,
 * never a FAIL of the store).
 */
export class ModelError extends HarnessError {
  /** Creates the error. */
  constructor(message: string) {
    super(message);
    this.name = "ModelError";
  }
}

/**
 * Persistence profiles for names: `posix`, a created, renamed or deleted name survives
 * only once its folder is synced; `ext4-ordered`, also with its file's fsync.
 *
 * @example
 * ```ts
 * import type { Profile } from "./_fs_model.ts";
 * const profile: Profile = "posix";
 * console.log(profile);
 * ```
 */
export type Profile = "posix" | "ext4-ordered";

function parent(name: string): string {
  const slash = name.lastIndexOf("/");
  return slash < 0 ? "" : name.slice(0, slash);
}

/** Whether a name is SQLite's WAL index, which is not durable state. */
export function isShm(name: string): boolean {
  return name.endsWith("-shm");
}

/** The folder replay. */
export class FsModel {
  readonly names = new Map<string, Inode>();
  readonly durableNames = new Map<string, Inode>();
  changes: NameChange[] = [];
  readonly #handles = new Map<number, Inode>();
  /** Handles opened with `O_DSYNC` or `O_SYNC`: each write returns once it is durable. */
  readonly #syncedWrites = new Set<number>();
  readonly #watched: string;
  readonly #profile: Profile;
  #nextInode = 1;
  /** Bumped whenever durable content or durable names change (part of a state's key). */
  durableVersion = 0;
  /** Acknowledgement lines (marks) seen so far, complete lines only. */
  readonly acks: string[] = [];
  #markTail = "";
  readonly #decoder = new TextDecoder();

  constructor(watched: string, baseline: FileSet, profile: Profile) {
    this.#watched = watched.replace(/\/+$/, "");
    this.#profile = profile;
    const root = this.#inode(true, "");
    this.names.set("", root);
    this.durableNames.set("", root);
    for (const [name, content] of baseline) {
      for (let dir = parent(name); dir !== "" && !this.names.has(dir); dir = parent(dir)) {
        const folder = this.#inode(true, dir);
        this.names.set(dir, folder);
        this.durableNames.set(dir, folder);
      }
      const inode = this.#inode(false, "", content);
      this.names.set(name, inode);
      this.durableNames.set(name, inode);
    }
  }

  #inode(dir: boolean, name: string, content?: Uint8Array): Inode {
    return {
      id: this.#nextInode++,
      dir,
      name,
      durable: new Bytes(content),
      pending: [],
      current: new Bytes(content),
      faulted: false,
    };
  }

  #relative(path: string, record: LogRecord): string {
    if (path === this.#watched) return "";
    if (!path.startsWith(`${this.#watched}/`)) {
      throw new ModelError(
        `Record ${record.seq} (${record.kind}) names "${path}", outside the watched folder "${this.#watched}"`,
      );
    }
    return path.slice(this.#watched.length + 1);
  }

  #setName(seq: number, name: string, to: Inode | null): void {
    if (to) this.names.set(name, to);
    else this.names.delete(name);
    this.changes.push({ seq, name, to });
  }

  #write(inode: Inode, seq: number, op: Op): void {
    inode.current.apply(op);
    inode.pending.push({ seq, op });
  }

  #syncInode(inode: Inode): void {
    if (inode.pending.length === 0) return;
    this.durableVersion++;
    if (inode.faulted) {
      // Only what was written since the failed sync lands; a new object, as a state may
      // still hold the old one.
      const next = inode.durable.clone();
      for (const { op } of inode.pending) next.apply(op);
      inode.durable = next;
    } else {
      inode.durable = inode.current.clone();
    }
    inode.pending = [];
  }

  /**
   * A failed sync of a file (ext4, XFS, Btrfs): the kernel marks the pages it could not
   * write back clean, so the writes pending then never land, even when a later sync
   * succeeds; a later write of the same bytes does (it dirties them again).
   */
  #failSync(record: LogRecord): void {
    const inode = this.#handles.get(record.handle);
    if (!inode || inode.dir || !WRITEBACK_ERRNOS.has(record.extra)) return;
    if (inode.pending.length === 0) return;
    this.durableVersion++;
    inode.pending = [];
    inode.faulted = true;
  }

  /** Makes the pending name changes durable: all of them, or those in one folder. */
  #syncNames(folder?: string): void {
    const kept: NameChange[] = [];
    this.durableVersion++;
    for (const change of this.changes) {
      if (folder === undefined || parent(change.name) === folder) {
        if (change.to) this.durableNames.set(change.name, change.to);
        else this.durableNames.delete(change.name);
      } else kept.push(change);
    }
    this.changes = kept;
  }

  #handle(record: LogRecord): Inode {
    const inode = this.#handles.get(record.handle);
    if (!inode) {
      throw new ModelError(
        `Record ${record.seq} (${record.kind}) uses handle ${record.handle}, which no recorded open gave (a descriptor the recorder did not see opened)`,
      );
    }
    return inode;
  }

  #named(name: string, record: LogRecord): Inode {
    const inode = this.names.get(name);
    if (!inode) {
      throw new ModelError(
        `Record ${record.seq} (${record.kind}) names "${name}", which the model does not have (a file the baseline lacks, or a call the recorder missed)`,
      );
    }
    return inode;
  }

  /** An open: a file made (O_CREAT) or emptied (O_TRUNC), and its handle. */
  #open(record: LogRecord): void {
    const seq = record.seq;
    const name = this.#relative(record.path, record);
    if (isShm(name)) return;
    let inode = this.names.get(name);
    const O_CREAT = 0x40, O_TRUNC = 0x200, O_DIRECTORY = 0x10000;
    if (!inode) {
      if (!(record.a & O_CREAT)) {
        throw new ModelError(
          `Record ${seq} opens "${name}", which the model does not have (a file the baseline lacks, or a call the recorder missed)`,
        );
      }
      inode = this.#inode((record.a & O_DIRECTORY) !== 0, name);
      this.#setName(seq, name, inode);
    } else if ((record.a & O_TRUNC) && !inode.dir) {
      this.#write(inode, seq, { size: 0 });
    }
    this.#handles.set(record.handle, inode);
    if (opensSynchronously(record)) this.#syncedWrites.add(record.handle);
    return;
  }

  /**
   * Whether `record` is a synchronous write (through a handle opened with `O_DSYNC` or
   * `O_SYNC`, or a `pwritev2` with `RWF_DSYNC` or `RWF_SYNC`): it returns only once its
   * data (and the file's size) is durable ({@linkcode FsModel.settleWrite}).
   */
  syncsOnWrite(record: LogRecord): boolean {
    return writesSynchronously(record, this.#syncedWrites);
  }

  /**
   * Makes a synchronous write durable once it is applied: its file's pending size changes
   * with it (the journal commit that makes the new size durable carries them). An earlier
   * write to the file that was never synced is not covered (Linux syncs the written range
   * only), so the model refuses to guess which of its bytes landed.
   */
  settleWrite(record: LogRecord): void {
    const inode = this.#handle(record);
    const unsynced = inode.pending.find(({ seq, op }) => seq !== record.seq && !("size" in op));
    if (unsynced) {
      throw new ModelError(
        `Record ${record.seq} is a synchronous write (O_DSYNC or O_SYNC, or RWF_DSYNC) while record ${unsynced.seq} left an unsynced write to the same file, and the model does not follow which of its bytes the synchronous write made durable (Linux syncs only the range written): sync that write first, or make every write of the file synchronous`,
      );
    }
    this.#syncInode(inode);
    if (this.#profile === "ext4-ordered") this.#syncNames();
  }

  /** An fallocate: the file grown, or a hole punched (zeros). */
  #fallocate(record: LogRecord): void {
    const seq = record.seq;
    const inode = this.#handles.get(record.handle);
    if (!inode) return;
    const mode = record.extra;
    const KEEP_SIZE = 1, PUNCH_HOLE = 2;
    if (mode === 0) {
      const end = record.a + record.b;
      if (end > inode.current.length) this.#write(inode, seq, { size: end });
    } else if (mode === (KEEP_SIZE | PUNCH_HOLE)) {
      const end = Math.min(record.a + record.b, inode.current.length);
      if (end > record.a) this.#write(inode, seq, { offset: record.a, zeros: end - record.a });
    } else if (mode !== KEEP_SIZE) {
      throw new ModelError(
        `Record ${seq} is a fallocate with mode ${mode}, which the model does not follow`,
      );
    }
    return;
  }

  /** An fsync or fdatasync of a file or a folder, under the profile. */
  #sync(record: LogRecord): void {
    const inode = this.#handles.get(record.handle);
    if (!inode) return;
    // sync_file_range flushes no metadata and no disk cache: it guarantees nothing.
    if (record.extra === 2) return;
    if (inode.dir) {
      this.#syncNames(this.#profile === "posix" ? inode.name : undefined);
      return;
    }
    this.#syncInode(inode);
    // ext4 (data=ordered) commits its one journal on fsync: every earlier name change.
    if (this.#profile === "ext4-ordered") this.#syncNames();
    return;
  }

  /** A rename or link, of a file or a whole folder. */
  #rename(record: LogRecord): void {
    const seq = record.seq;
    const from = this.#relative(record.path, record);
    const to = this.#relative(record.path2, record);
    if (isShm(from) && isShm(to)) return;
    const inode = this.#named(from, record);
    if (record.kind === "rename" && record.extra !== 0) {
      throw new ModelError(
        `Record ${seq} is a renameat2 with flags ${record.extra}, which the model does not follow`,
      );
    }
    if (inode.dir && record.kind === "rename") {
      for (const [name, child] of [...this.names]) {
        if (name.startsWith(`${from}/`)) {
          this.#setName(seq, name, null);
          this.#setName(seq, `${to}/${name.slice(from.length + 1)}`, child);
        }
      }
      inode.name = to;
    }
    this.#setName(seq, to, inode);
    if (record.kind === "rename" && from !== to) this.#setName(seq, from, null);
    return;
  }

  /**
   * Advances the replay by one record; a synchronous write is made durable too unless
   * `settle` is false (then {@linkcode FsModel.settleWrite} does it).
   */
  apply(record: LogRecord, settle = true): void {
    this.#apply(record);
    if (settle && this.syncsOnWrite(record)) this.settleWrite(record);
  }

  #apply(record: LogRecord): void {
    if (record.kind === "mark") {
      const text = this.#markTail + this.#decoder.decode(record.data);
      const lines = text.split("\n");
      this.#markTail = lines.pop()!;
      for (const line of lines) this.acks.push(line);
      return;
    }
    if (record.failed) {
      if (record.kind === "sync") this.#failSync(record);
      return;
    }
    const seq = record.seq;
    switch (record.kind) {
      case "open":
        return this.#open(record);
      case "write": {
        const inode = this.#handles.get(record.handle);
        if (!inode) return; // the -shm index
        if (record.b > 0 && record.data.length !== record.b) {
          throw new ModelError(
            `Record ${seq} writes ${record.b} bytes but the log kept ${record.data.length} (record with FSREC_DATA=1 for power-loss states)`,
          );
        }
        if (record.b > 0) this.#write(inode, seq, { offset: record.a, data: record.data });
        return;
      }
      case "truncate": {
        if (record.handle === 0 && isShm(record.path)) return;
        const inode = record.handle === 0
          ? this.#named(this.#relative(record.path, record), record)
          : this.#handles.get(record.handle);
        if (!inode) return; // the -shm index
        this.#write(inode, seq, { size: record.a });
        return;
      }
      case "fallocate":
        return this.#fallocate(record);
      case "sync":
        return this.#sync(record);
      case "syncAll":
        for (const inode of new Set([...this.names.values(), ...this.#handles.values()])) {
          this.#syncInode(inode);
        }
        this.#syncNames();
        return;
      case "unlink":
      case "rmdir": {
        const name = this.#relative(record.path, record);
        if (isShm(name)) return;
        this.#setName(seq, name, null);
        return;
      }
      case "mkdir": {
        const name = this.#relative(record.path, record);
        this.#setName(seq, name, this.#inode(true, name));
        return;
      }
      case "rename":
      case "link":
        return this.#rename(record);
      case "mmap":
      case "outside":
      case "unmodelled":
      case "overflow":
      case "hello":
      case "read":
      case "hazard":
        return;
    }
  }

  /** Every inode a name points to now or durably, or a pending change names. */
  reachable(): Inode[] {
    const all = new Set<Inode>();
    for (const inode of this.durableNames.values()) all.add(inode);
    for (const change of this.changes) if (change.to) all.add(change.to);
    return [...all].filter((inode) => !inode.dir);
  }

  /** The files now: what a SIGKILL at this instant leaves. */
  currentImage(): FileSet {
    const files: FileSet = new Map();
    for (const [name, inode] of this.names) {
      if (!inode.dir && !isShm(name)) files.set(name, inode.current.view().slice());
    }
    return files;
  }
}
