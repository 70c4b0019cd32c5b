/**
 * A store that is not SQLite and not a log: its whole state is one JSON snapshot, replaced
 * on every change the way editors and config stores save a file: write a temporary file
 * beside it, sync it, rename it over the snapshot, sync the folder. Writers exclude each
 * other with an `flock` on a lock file that is never replaced. Used to show that the tiers
 * judge a store whose durability rests on a rename, not on writes to one file.
 *
 * @module
 */
import type { CellMessage } from "../../contract/target.ts";
import {
  CorruptStoreError,
  folderOf,
  StorageError,
  syncFolder,
  type Transcript,
  TranscriptReads,
  typedIo,
  UnknownSessionError,
} from "../_store_kit.ts";

export { CorruptStoreError, StorageError, UnknownSessionError };

/** Options of {@linkcode SnapshotStore.open}; each `false` is a planted fault. */
export interface SnapshotOptions {
  /** Sync the temporary file before renaming it into place (default true). */
  syncData?: boolean;
  /** Sync the folder after the rename (default true). */
  syncFolder?: boolean;
  /**
   * What writers lock (default `"lock-file"`). `"snapshot"` locks the snapshot file itself,
   * which each save replaces: two writers can then hold locks on different files at once.
   */
  lock?: "lock-file" | "snapshot";
}

/** The JSON snapshot store. */
export class SnapshotStore extends TranscriptReads {
  #path: string;
  #lockFile: Deno.FsFile;
  #options: Required<SnapshotOptions>;

  private constructor(path: string, lockFile: Deno.FsFile, options: SnapshotOptions) {
    super();
    this.#path = path;
    this.#lockFile = lockFile;
    this.#options = { syncData: true, syncFolder: true, lock: "lock-file", ...options };
  }

  /** Opens the store at `path`, creating an empty snapshot when there is none. */
  static open(path: string, options: SnapshotOptions = {}): SnapshotStore {
    const lockFile = typedIo(
      path,
      () => Deno.openSync(`${path}.lock`, { read: true, write: true, create: true }),
    );
    const store = new SnapshotStore(path, lockFile, options);
    store.#locked(true, () => {
      try {
        Deno.statSync(path);
      } catch (error) {
        if (!(error instanceof Deno.errors.NotFound)) throw error;
        store.#save({ sessions: [], messages: [] });
      }
    });
    return store;
  }

  #locked<T>(exclusive: boolean, run: () => T): T {
    return typedIo(this.#path, () => {
      const file = this.#options.lock === "snapshot" ? this.#openSnapshot() : this.#lockFile;
      file.lockSync(exclusive);
      try {
        return run();
      } finally {
        file.unlockSync();
        if (file !== this.#lockFile) file.close();
      }
    });
  }

  #openSnapshot(): Deno.FsFile {
    try {
      return Deno.openSync(this.#path, { read: true });
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return this.#lockFile;
      throw error;
    }
  }

  #load(): Transcript {
    const text = Deno.readTextFileSync(this.#path);
    try {
      return JSON.parse(text);
    } catch (error) {
      throw new CorruptStoreError(`Cannot read store "${this.#path}": ${error}`, { cause: error });
    }
  }

  #save(snapshot: Transcript): void {
    const temporary = `${this.#path}.${Deno.pid}.tmp`;
    const file = Deno.openSync(temporary, { write: true, create: true, truncate: true });
    try {
      const bytes = new TextEncoder().encode(JSON.stringify(snapshot));
      let written = 0;
      while (written < bytes.length) written += file.writeSync(bytes.subarray(written));
      if (this.#options.syncData) file.syncSync();
    } finally {
      file.close();
    }
    Deno.renameSync(temporary, this.#path);
    if (this.#options.syncFolder) syncFolder(folderOf(this.#path));
  }

  #change(change: (snapshot: Transcript) => boolean): void {
    this.#locked(true, () => {
      const snapshot = this.#load();
      if (change(snapshot)) this.#save(snapshot);
    });
  }

  /** Creates a session, keeping an existing one. */
  createSession(id: string): void {
    this.#change((snapshot) => {
      if (snapshot.sessions.includes(id)) return false;
      snapshot.sessions.push(id);
      return true;
    });
  }

  /** Appends a message; returns its id once the snapshot holding it is durable. */
  appendMessage(sessionId: string, message: CellMessage): number {
    let id = 0;
    this.#change((snapshot) => {
      if (!snapshot.sessions.includes(sessionId)) {
        throw new UnknownSessionError(`Cannot append to session "${sessionId}": not found`);
      }
      id = (snapshot.messages.at(-1)?.id ?? 0) + 1;
      snapshot.messages.push({ id, session: sessionId, ...message });
      return true;
    });
    return id;
  }

  #read(): Transcript {
    return this.#locked(false, () => this.#load());
  }

  /** The store's transcript as its files hold it now. */
  protected transcript(): Transcript {
    return this.#read();
  }

  /** Closes the store. */
  close(): void {
    this.#lockFile.close();
  }
}
