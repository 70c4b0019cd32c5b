/**
 * A store that is not SQLite and not a log: its whole state is one JSON snapshot, replaced
 * on every change the way editors and config stores save a file: write a temporary file
 * beside it, sync it, rename it over the snapshot, sync the folder. Writers exclude each
 * other with an `flock` on a lock file that is never replaced. Used to show that the tiers
 * judge a store whose durability rests on a rename, not on writes to one file.
 *
 * @module
 */
import type { CellMessage, StoredMessage, StoredSession } from "../../contract/target.ts";

interface Snapshot {
  sessions: string[];
  messages: { id: number; session: string; role: string; content: string }[];
}

/** An append named a session the store does not hold. */
export class UnknownSessionError extends Error {
  /** Creates the error. */
  constructor(message: string) {
    super(message);
    this.name = "UnknownSessionError";
  }
}

/** The file system failed a call (a full disk, an I/O error): nothing was changed. */
export class StorageError extends Error {
  /** Creates the error. */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "StorageError";
  }
}

/** The snapshot does not parse: the store is damaged, never served short. */
export class CorruptStoreError extends Error {
  /** Creates the error. */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "CorruptStoreError";
  }
}

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

function folderOf(path: string): string {
  return path.slice(0, path.lastIndexOf("/")) || ".";
}

/** The JSON snapshot store. */
export class SnapshotStore {
  #path: string;
  #lockFile: Deno.FsFile;
  #options: Required<SnapshotOptions>;

  private constructor(path: string, lockFile: Deno.FsFile, options: SnapshotOptions) {
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

  #load(): Snapshot {
    const text = Deno.readTextFileSync(this.#path);
    try {
      return JSON.parse(text);
    } catch (error) {
      throw new CorruptStoreError(`Cannot read store "${this.#path}": ${error}`, { cause: error });
    }
  }

  #save(snapshot: Snapshot): void {
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
    if (this.#options.syncFolder) {
      const folder = Deno.openSync(folderOf(this.#path), { read: true });
      try {
        folder.syncSync();
      } finally {
        folder.close();
      }
    }
  }

  #change(change: (snapshot: Snapshot) => boolean): void {
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

  /** The session's messages in id order. */
  getMessages(sessionId: string): StoredMessage[] {
    return this.#locked(false, () => this.#load()).messages.flatMap((m) =>
      m.session === sessionId ? [{ id: m.id, role: m.role, content: m.content }] : []
    );
  }

  /** A session, or `undefined`. */
  getSession(id: string): StoredSession | undefined {
    return this.listSessions().find((session) => session.id === id);
  }

  /** Every session. */
  listSessions(): StoredSession[] {
    return this.#locked(false, () => this.#load()).sessions.map((id) => ({
      id,
      parentSessionId: null,
      endedAt: null,
      endReason: null,
    }));
  }

  /** Broken invariants: ids not increasing, messages of unknown sessions. */
  checkInvariants(): string[] {
    const snapshot = this.#locked(false, () => this.#load());
    const problems: string[] = [];
    let last = 0;
    for (const message of snapshot.messages) {
      if (message.id <= last) problems.push(`message id ${message.id} after ${last}`);
      if (!snapshot.sessions.includes(message.session)) {
        problems.push(`message ${message.id} of unknown session`);
      }
      last = message.id;
    }
    return problems;
  }

  /** Closes the store. */
  close(): void {
    this.#lockFile.close();
  }
}

/** Runs `run`, turning a failure of the file system into a {@linkcode StorageError}. */
function typedIo<T>(path: string, run: () => T): T {
  try {
    return run();
  } catch (error) {
    if (
      error instanceof UnknownSessionError || error instanceof CorruptStoreError ||
      error instanceof StorageError || !(error instanceof Error)
    ) throw error;
    throw new StorageError(`Cannot use store "${path}": ${error.message}`, { cause: error });
  }
}
