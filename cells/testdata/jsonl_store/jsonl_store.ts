/**
 * A store that is not SQLite: an append-only JSON-lines log, one line per session or
 * message, each append written in one `write` under an exclusive lock and synced before it
 * returns. A torn tail (a last line without its newline, from a writer that died, or last
 * lines a power loss left zeroed or garbage) is dropped and cut off the file. Used to
 * show that the cells judge any kind of store: the journal-mode legs do not apply to it.
 *
 * @module
 */
import type { CellMessage } from "../../contract/target.ts";
import { exists } from "../../../internal/fs.ts";
import {
  CorruptStoreError,
  folderOf,
  type Line,
  parseLine,
  StorageError,
  syncFolder,
  type Transcript,
  transcriptOf,
  TranscriptReads,
  typedIo,
  UnknownSessionError,
} from "../_store_kit.ts";

export { CorruptStoreError, StorageError, UnknownSessionError };

/** The calls the store makes on its log file (`Deno.FsFile` has them all). */
export interface LogFile {
  /** Writes at the end of the file; the bytes written. */
  writeSync(bytes: Uint8Array): number;
  /** Cuts the file to `size` bytes. */
  truncateSync(size: number): void;
  /** Syncs data and metadata. */
  syncSync(): void;
  /** Syncs data. */
  syncDataSync(): void;
  /** Takes the file's lock. */
  lockSync(exclusive?: boolean): void;
  /** Drops the file's lock. */
  unlockSync(): void;
  /** Closes the file. */
  close(): void;
}

/** Options of {@linkcode JsonlStore.open}. */
export interface JsonlOptions {
  /**
   * Opens the log for reading and appending, creating it (default: `Deno.openSync`). A
   * log whose writes are synchronous (`O_DSYNC`) may make its syncs no-ops.
   */
  openFile?: (path: string) => LogFile;
  /** Sync the folder after creating the log (default true; false is a planted fault). */
  syncNewLog?: boolean;
  /** Keep a lock file beside the log while open, and refuse to open while it exists. */
  lockFile?: boolean;
  /**
   * A planted fault for the fault tier's mutant: retry a failed sync once and acknowledge
   * when the retry succeeds (the retried sync reports the pages clean, their data lost).
   */
  retryFailedSync?: boolean;
}

/** The JSON-lines store. Several processes may share one log: each append holds an
 * exclusive lock on it and first reads what the others appended. */
export class JsonlStore extends TranscriptReads {
  #file: LogFile;
  #path: string;
  #lines: Line[] = [];
  #size = 0;
  #lock: string | undefined;
  #encoder = new TextEncoder();
  #retryFailedSync: boolean;

  private constructor(file: LogFile, path: string, options: JsonlOptions & { lock?: string }) {
    super();
    this.#file = file;
    this.#path = path;
    this.#lock = options.lock;
    this.#retryFailedSync = options.retryFailedSync ?? false;
  }

  /** Opens (creating) the log at `path`, dropping a torn last line. */
  static open(path: string, options: JsonlOptions = {}): JsonlStore {
    let lock: string | undefined;
    if (options.lockFile) {
      lock = `${path}.lock`;
      try {
        Deno.writeTextFileSync(lock, String(Deno.pid), { createNew: true });
      } catch (error) {
        if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
        throw new Error(`Cannot open store "${path}": it is locked (${lock} exists)`);
      }
    }
    return typedIo(path, () => {
      const created = !exists(path);
      const file = options.openFile?.(path) ??
        Deno.openSync(path, { read: true, append: true, create: true });
      // A new file's name is durable only once its folder is synced (strict POSIX).
      if (created && options.syncNewLog !== false) syncFolder(folderOf(path));
      const store = new JsonlStore(file, path, { ...options, ...(lock ? { lock } : {}) });
      store.#locked(true, () => store.#catchUp());
      return store;
    });
  }

  #locked<T>(exclusive: boolean, run: () => T): T {
    return typedIo(this.#path, () => {
      this.#file.lockSync(exclusive);
      try {
        return run();
      } finally {
        this.#file.unlockSync();
      }
    });
  }

  /**
   * Reads what was appended since the last read; under an exclusive lock, cuts a torn tail.
   * A torn tail is what follows the last whole line: a line without its newline, or lines
   * none of which parses (a power loss can leave the last write's bytes zeroed or garbage,
   * newlines included). A line that does not parse before one that does is corruption.
   */
  #catchUp(exclusive = true): void {
    const bytes = Deno.readFileSync(this.#path);
    const fresh = new TextDecoder().decode(bytes.subarray(this.#size));
    const lines = fresh.split("\n");
    const parsed = lines.map(parseLine);
    // The whole lines: up to the last one that parses, each ending with its newline.
    const whole = parsed.findLastIndex((line, i) => line !== undefined && i < lines.length - 1) + 1;
    const bad = parsed.slice(0, whole).findIndex((line, i) =>
      line === undefined && lines[i] !== ""
    );
    if (bad !== -1) {
      throw new CorruptStoreError(
        `Cannot open store "${this.#path}": line ${
          this.#lines.length + bad + 1
        } is corrupt (restore it from a backup)`,
      );
    }
    const complete = lines.slice(0, whole).map((line) => `${line}\n`).join("");
    const size = this.#size + this.#encoder.encode(complete).length;
    if (exclusive && size < bytes.length) {
      // A torn tail: an append whose writer died before it was whole, never acknowledged.
      // Cut only under the exclusive lock, when no live writer can be mid-append.
      this.#file.truncateSync(size);
      this.#file.syncSync();
    }
    for (const line of parsed.slice(0, whole)) if (line) this.#lines.push(line);
    this.#size = size;
  }

  #append(make: () => Line | undefined): Line | undefined {
    return this.#locked(true, () => {
      this.#catchUp();
      const line = make();
      if (!line) return undefined;
      const bytes = this.#encoder.encode(JSON.stringify(line) + "\n");
      this.#write(bytes);
      this.#lines.push(line);
      this.#size += bytes.length;
      return line;
    });
  }

  /**
   * Writes and syncs a whole line, or cuts what was written of it and throws: a line whose
   * write or sync failed is never acknowledged, and never left for the next line to follow.
   */
  #write(bytes: Uint8Array): void {
    try {
      let written = 0;
      while (written < bytes.length) {
        written += this.#file.writeSync(bytes.subarray(written));
      }
      this.#sync();
    } catch (error) {
      try {
        this.#file.truncateSync(this.#size);
      } catch { /* the next open cuts a torn tail */ }
      throw new StorageError(`Cannot append to store "${this.#path}": ${error}`, {
        cause: error,
      });
    }
  }

  #sync(): void {
    try {
      this.#file.syncDataSync();
    } catch (error) {
      if (!this.#retryFailedSync) throw error;
      this.#file.syncDataSync();
    }
  }

  #read(): Line[] {
    this.#locked(false, () => this.#catchUp(false));
    return this.#lines;
  }

  /** Creates a session, keeping an existing one. */
  createSession(id: string): void {
    this.#append(() =>
      this.#lines.some((line) => line.t === "session" && line.id === id)
        ? undefined
        : { t: "session", id, at: Date.now() }
    );
  }

  /** Appends a message; returns its id once it is on disk. */
  appendMessage(sessionId: string, message: CellMessage): number {
    const line = this.#append(() => {
      if (!this.#lines.some((l) => l.t === "session" && l.id === sessionId)) {
        throw new UnknownSessionError(`Cannot append to session "${sessionId}": not found`);
      }
      const last = this.#lines.findLast((l) => l.t === "message");
      const id = last?.t === "message" ? last.id + 1 : 1;
      return { t: "message", id, session: sessionId, ...message };
    });
    return (line as Extract<Line, { t: "message" }>).id;
  }

  /** The store's transcript as its files hold it now. */
  protected transcript(): Transcript {
    return transcriptOf(this.#read());
  }

  /** Closes the log (and removes its lock file). */
  close(): void {
    this.#file.close();
    if (this.#lock) Deno.removeSync(this.#lock);
  }
}
