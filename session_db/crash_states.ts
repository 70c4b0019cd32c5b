/**
 * Power-loss crash states: from a baseline copy of a database's folder plus the log of
 * the recording VFS (`recording_vfs.ts`), the file sets a power loss at the moment of
 * the kill could have left on disk. A SIGKILL keeps the page cache, so the files on disk
 * after it are the "full" state; a power loss keeps only what reached the disk.
 *
 * The model (one folder; names are relative to it):
 *
 * - Files are inodes; a name points to an inode. An open of a name that points to
 *   nothing creates a new, empty inode. Writes and truncations go to the inode of the
 *   open file, in log order.
 * - A completed `xSync` of a file makes every earlier write and truncation of that inode
 *   durable: its durable content becomes its content at that moment.
 * - A synced inode's name is durable too: the model assumes an fsync persists the synced
 *   file's own directory entry, and nothing else of the folder (ext4 and xfs persist at
 *   least that). A file never synced exists after a power loss only if it was in the
 *   baseline.
 * - Folder syncs are where SQLite's unix VFS makes them: an `xDelete` with its
 *   directory-sync flag (`synchronous=EXTRA` sets it for the rollback journal), and the
 *   first `xSync` of a journal or WAL opened with `SQLITE_OPEN_CREATE` (os_unix.c syncs
 *   the folder then, `UNIXFILE_DIRSYNC`). A folder sync makes every pending name change
 *   of the folder durable.
 * - An unlink is durable only after a folder sync, or when a later sync makes the name
 *   durable again (a re-created journal synced at that path). Until then the old inode
 *   stays under its name with its durable content: a hot journal can come back.
 * - Writes are not atomic: a power loss can persist any subset of the writes made since
 *   an inode's last sync, and of a write any subset of its 512-byte sectors (aligned on
 *   the file offset). A kept subset is applied in per-file order. The WAL index (`-shm`)
 *   is not state: SQLite rebuilds it from the WAL, so it is never materialised.
 *
 * The states:
 *
 * - (a) the last-sync image ({@linkcode CrashModel.lastSyncImage}): each name as of its
 *   last durable entry, each inode as of its last completed sync. Durability is judged
 *   here: every acknowledged operation must be in it.
 * - the full image ({@linkcode CrashModel.fullImage}): everything applied, what a SIGKILL
 *   leaves.
 * - (b) seeded random subsets ({@linkcode CrashModel.randomState}): per name, one of the
 *   entries it had since its last durable one; per inode, a random subset of its
 *   unsynced writes and truncations, in order.
 * - (c) torn states: (b) where kept writes may also lose 512-byte sectors.
 *
 * Consistency is judged on every state: it must recover to a valid database.
 *
 * @example
 * ```ts
 * import { CrashModel } from "./crash_states.ts";
 * const dir = "/tmp/run/db";
 * const model = new CrashModel(new Map(), [
 *   { kind: "open", seq: 0, file: 1, path: `${dir}/s.db`, flags: 0x100 },
 *   { kind: "write", seq: 1, file: 1, offset: 0, data: new Uint8Array([1, 2]) },
 *   { kind: "sync", seq: 2, file: 1, flags: 2 },
 *   { kind: "write", seq: 3, file: 1, offset: 2, data: new Uint8Array([3]) },
 * ], dir);
 * console.log(model.lastSyncImage().get("s.db")); // Uint8Array [1, 2]
 * console.log(model.fullImage().get("s.db")); // Uint8Array [1, 2, 3]
 * ```
 *
 * @module
 */
import { basename, dirname, join } from "node:path";
import type { LogRecord } from "./_vfs_log.ts";
import {
  SQLITE_OPEN_CREATE,
  SQLITE_OPEN_MAIN_JOURNAL,
  SQLITE_OPEN_SUPER_JOURNAL,
  SQLITE_OPEN_WAL,
} from "./sqlite/constants.ts";

export { type LogRecord, readVfsLog, type VfsLog } from "./_vfs_log.ts";

/**
 * A set of files: name (relative to the database's folder) to content.
 *
 * @example
 * ```ts
 * import { type FileSet, materialise, snapshotFolder } from "./crash_states.ts";
 * const files: FileSet = new Map([["s.db", new Uint8Array([1, 2, 3])]]);
 * const dir = materialise(files, `${Deno.makeTempDirSync()}/state`);
 * console.log(snapshotFolder(dir).get("s.db")); // Uint8Array [1, 2, 3]
 * ```
 */
export type FileSet = Map<string, Uint8Array>;

/** The sector size torn writes are cut at. */
export const SECTOR_SIZE = 512;

/**
 * One materialisable crash state.
 *
 * @example
 * ```ts
 * import { CrashModel, type CrashState, materialise } from "./crash_states.ts";
 * const dir = Deno.makeTempDirSync();
 * const states: CrashState[] = new CrashModel(new Map(), [], dir).states({ subsets: 1, torn: 1 });
 * for (const state of states) materialise(state.files, `${dir}/${state.kind}-${state.seed}`);
 * ```
 */
export interface CrashState {
  /** `last-sync`, `full`, `subset` or `torn`. */
  kind: "last-sync" | "full" | "subset" | "torn";
  /** The seed of a random state (0 for the deterministic ones). */
  seed: number;
  /** The files. */
  files: FileSet;
}

/** Options of {@linkcode CrashModel.states}. */
export interface StatesOptions {
  /** Random subset states (b) (default 16). */
  subsets?: number;
  /** Torn states (c) (default 8). */
  torn?: number;
  /** The first seed (default 1); state k uses seed + k. */
  seed?: number;
}

/** Raised when the log does not fit the model. */
export class CrashModelError extends Error {
  /** Creates the error. */
  constructor(message: string) {
    super(message);
    this.name = "CrashModelError";
  }
}

const CREATES_WITH_FOLDER_SYNC = SQLITE_OPEN_MAIN_JOURNAL | SQLITE_OPEN_SUPER_JOURNAL |
  SQLITE_OPEN_WAL;

type Op = { offset: number; data: Uint8Array } | { size: number };

class Bytes {
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

  write(offset: number, data: Uint8Array): void {
    const end = offset + data.length;
    this.#reserve(end);
    // A write past the end leaves a hole of zeros, as a sparse file reads.
    if (offset > this.length) this.#buffer.fill(0, this.length, offset);
    this.#buffer.set(data, offset);
    if (end > this.length) this.length = end;
  }

  truncate(size: number): void {
    if (size > this.length) {
      this.#reserve(size);
      this.#buffer.fill(0, this.length, size);
    }
    this.length = size;
  }

  apply(op: Op): void {
    if ("size" in op) this.truncate(op.size);
    else this.write(op.offset, op.data);
  }

  bytes(): Uint8Array {
    return this.#buffer.slice(0, this.length);
  }
}

interface Inode {
  /** Content as of the last completed sync; `undefined` when never synced. */
  durable: Bytes | undefined;
  /** Writes and truncations since the last sync, in order. */
  pending: Op[];
}

interface Entry {
  /** The inode the name durably points to, or `null`. */
  durable: Inode | null;
  /** Entries the name had since, oldest first (`null` after an unlink). */
  since: (Inode | null)[];
}

/** A small seeded generator (mulberry32): the same seed gives the same state. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The crash model of one folder: a baseline plus a recording VFS log.
 *
 * @example
 * ```ts
 * import { CrashModel, readVfsLog, snapshotFolder } from "./crash_states.ts";
 * const dir = Deno.makeTempDirSync();
 * const model = new CrashModel(snapshotFolder(dir), readVfsLog(`${dir}/none.log`).records, dir);
 * console.log(model.states({ subsets: 2, torn: 1 }).length); // 5
 * ```
 */
export class CrashModel {
  #entries = new Map<string, Entry>();
  #dir: string;
  #syncs = 0;
  #unsynced = 0;

  /**
   * Replays the log over the baseline.
   *
   * @param baseline The folder's files before the recorded process started.
   * @param records The log's records.
   * @param dir The folder the logged paths are in.
   * @throws {CrashModelError} When the log touches a file outside `dir`, or writes
   * through a file it never opened.
   */
  constructor(baseline: FileSet, records: readonly LogRecord[], dir: string) {
    this.#dir = dir;
    for (const [name, content] of baseline) {
      this.#entries.set(name, { durable: { durable: new Bytes(content), pending: [] }, since: [] });
    }
    const files = new Map<number, Inode>();
    // Files whose first sync also syncs the folder (os_unix.c: UNIXFILE_DIRSYNC).
    const syncsFolder = new Set<number>();
    const inodeOf = (record: { file: number; seq: number }) => {
      const inode = files.get(record.file);
      if (!inode) {
        throw new CrashModelError(
          `Cannot replay the VFS log: record ${record.seq} uses file ${record.file}, which it never opened (the log is incomplete; record the run again)`,
        );
      }
      return inode;
    };
    for (const record of records) {
      switch (record.kind) {
        case "open": {
          const entry = this.#entry(record.path);
          let inode = entry.since.length ? entry.since.at(-1)! : entry.durable;
          if (inode === null) {
            inode = { durable: undefined, pending: [] };
            entry.since.push(inode);
          }
          files.set(record.file, inode);
          if ((record.flags & SQLITE_OPEN_CREATE) && (record.flags & CREATES_WITH_FOLDER_SYNC)) {
            syncsFolder.add(record.file);
          }
          break;
        }
        case "write":
          inodeOf(record).pending.push({ offset: record.offset, data: record.data });
          this.#unsynced++;
          break;
        case "truncate":
          inodeOf(record).pending.push({ size: record.size });
          this.#unsynced++;
          break;
        case "sync": {
          const inode = inodeOf(record);
          inode.durable ??= new Bytes();
          for (const op of inode.pending) inode.durable.apply(op);
          inode.pending = [];
          this.#syncs++;
          // A synced file's name is durable: the entry it is under now becomes durable.
          for (const entry of this.#entries.values()) {
            if (entry.since.at(-1) === inode) {
              entry.durable = inode;
              entry.since = [];
            }
          }
          if (syncsFolder.delete(record.file)) this.#folderSynced();
          break;
        }
        case "delete": {
          const entry = this.#entry(record.path);
          entry.since.push(null);
          if (record.dirSync) this.#folderSynced();
          break;
        }
        case "close":
          files.delete(record.file);
          break;
      }
    }
  }

  /** A folder sync makes every pending name change in it durable. */
  #folderSynced(): void {
    for (const entry of this.#entries.values()) {
      if (entry.since.length) {
        entry.durable = entry.since.at(-1)!;
        entry.since = [];
      }
    }
  }

  #entry(path: string): Entry {
    if (dirname(path) !== this.#dir) {
      throw new CrashModelError(
        `Cannot model crash states: the log touches "${path}", outside "${this.#dir}" (give each database its own folder and log)`,
      );
    }
    const name = basename(path);
    let entry = this.#entries.get(name);
    if (!entry) {
      entry = { durable: null, since: [] };
      this.#entries.set(name, entry);
    }
    return entry;
  }

  /** Completed syncs in the log. */
  get syncs(): number {
    return this.#syncs;
  }

  /** Writes and truncations in the log. */
  get operations(): number {
    return this.#unsynced;
  }

  /** Names whose unlink or creation is not durable yet. */
  get pendingNames(): string[] {
    return [...this.#entries].filter(([, e]) => e.since.length > 0).map(([name]) => name);
  }

  /**
   * (a) Each name as of its last durable entry, each file as of its last completed sync.
   *
   * @returns The files.
   */
  lastSyncImage(): FileSet {
    const out: FileSet = new Map();
    for (const [name, entry] of this.#entries) {
      if (entry.durable) out.set(name, entry.durable.durable?.bytes() ?? new Uint8Array(0));
    }
    return out;
  }

  /**
   * Everything the process wrote: what a SIGKILL leaves on disk.
   *
   * @returns The files.
   */
  fullImage(): FileSet {
    const out: FileSet = new Map();
    for (const [name, entry] of this.#entries) {
      const inode = entry.since.length ? entry.since.at(-1)! : entry.durable;
      if (!inode) continue;
      const content = new Bytes(inode.durable?.bytes());
      for (const op of inode.pending) content.apply(op);
      out.set(name, content.bytes());
    }
    return out;
  }

  /**
   * (b) and (c): a seeded random state. Per name, one of the entries it had since its
   * last durable one; per file, a random subset of its unsynced writes and truncations,
   * in order; with `torn`, a kept write may also lose some of its 512-byte sectors.
   *
   * @param seed The seed.
   * @param torn Tear writes too.
   * @returns The files.
   */
  randomState(seed: number, torn = false): FileSet {
    const next = random(seed);
    // Each state draws its own keep probability, so some lose little and some lose much.
    const keep = next();
    const out: FileSet = new Map();
    for (const [name, entry] of this.#entries) {
      const choices = [entry.durable, ...entry.since];
      const inode = choices[Math.floor(next() * choices.length)] ?? null;
      if (!inode) continue;
      const content = new Bytes(inode.durable?.bytes());
      for (const op of inode.pending) {
        if (next() >= keep) continue;
        if (torn && "data" in op && op.data.length > 1 && next() < 0.5) {
          for (const [offset, data] of sectors(op.offset, op.data)) {
            if (next() < 0.5) content.write(offset, data);
          }
        } else content.apply(op);
      }
      out.set(name, content.bytes());
    }
    return out;
  }

  /**
   * The states to check: the last-sync image, the full image, `subsets` random subset
   * states and `torn` torn states.
   *
   * @param options How many random states, and the first seed.
   * @returns The states, the last-sync image first.
   */
  states(options: StatesOptions = {}): CrashState[] {
    const seed = options.seed ?? 1;
    const out: CrashState[] = [
      { kind: "last-sync", seed: 0, files: this.lastSyncImage() },
      { kind: "full", seed: 0, files: this.fullImage() },
    ];
    const subsets = options.subsets ?? 16;
    for (let k = 0; k < subsets; k++) {
      out.push({ kind: "subset", seed: seed + k, files: this.randomState(seed + k) });
    }
    for (let k = 0; k < (options.torn ?? 8); k++) {
      const s = seed + subsets + k;
      out.push({ kind: "torn", seed: s, files: this.randomState(s, true) });
    }
    return out;
  }
}

/** A write cut into its 512-byte sectors, aligned on the file offset. */
function sectors(offset: number, data: Uint8Array): [number, Uint8Array][] {
  const out: [number, Uint8Array][] = [];
  let at = 0;
  while (at < data.length) {
    const end = Math.min(
      data.length,
      (Math.floor((offset + at) / SECTOR_SIZE) + 1) * SECTOR_SIZE - offset,
    );
    out.push([offset + at, data.subarray(at, end)]);
    at = end;
  }
  return out;
}

/**
 * Copies a folder's files as a baseline (the WAL index `-shm` excepted: it is not state).
 *
 * @param dir The folder; a missing folder reads as empty.
 * @returns The files.
 */
export function snapshotFolder(dir: string): FileSet {
  const out: FileSet = new Map();
  let entries: Deno.DirEntry[];
  try {
    entries = [...Deno.readDirSync(dir)];
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return out;
    throw error;
  }
  for (const entry of entries) {
    if (!entry.isFile || entry.name.endsWith("-shm")) continue;
    out.set(entry.name, Deno.readFileSync(join(dir, entry.name)));
  }
  return out;
}

/**
 * Writes a file set into a fresh folder (created; it must not hold files already).
 *
 * @param files The files.
 * @param dir The folder.
 * @returns The folder.
 */
export function materialise(files: FileSet, dir: string): string {
  Deno.mkdirSync(dir, { recursive: true });
  for (const [name, content] of files) Deno.writeFileSync(join(dir, name), content);
  return dir;
}
