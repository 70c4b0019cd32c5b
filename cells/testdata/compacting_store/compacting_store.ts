/**
 * A store with a log and a snapshot, as Redis's append-only file or a LevelDB memtable
 * flush keep one: each change is a line of `<path>.log` numbered by a sequence and synced;
 * every {@linkcode COMPACT_EVERY} lines the whole state is compacted into the snapshot at
 * `path` (a temporary file synced, renamed into place, the folder synced) and the log is
 * cut to nothing. A log line whose sequence the snapshot already covers is skipped, so a
 * crash between the rename and the cut doubles nothing. Writers hold an `flock` on
 * `<path>.lock`. Used to show that the kill series walks a store's periodic work.
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

/** How many log lines are kept before the state is compacted into the snapshot. */
export const COMPACT_EVERY = 8;

type Change =
  | { t: "session"; id: string }
  | { t: "message"; id: number; session: string; role: string; content: string };
type Line = Change & { seq: number };

/** The transcript with the last sequence it covers. */
interface Snapshot extends Transcript {
  seq: number;
}

/** Options of {@linkcode CompactingStore.open}. */
export interface CompactingOptions {
  /**
   * Skip the log lines the snapshot covers (default true; false is a planted fault: a
   * crash between the snapshot's rename and the log's cut replays them twice).
   */
  skipCovered?: boolean;
}

function parseLine(text: string): Line | undefined {
  try {
    const line = JSON.parse(text);
    return typeof line?.seq === "number" ? line : undefined;
  } catch {
    return undefined;
  }
}

/** The compacting store. */
export class CompactingStore extends TranscriptReads {
  #path: string;
  #lock: Deno.FsFile;
  #log: Deno.FsFile;
  #skipCovered: boolean;

  private constructor(path: string, files: { lock: Deno.FsFile; log: Deno.FsFile }, skip: boolean) {
    super();
    this.#path = path;
    this.#lock = files.lock;
    this.#log = files.log;
    this.#skipCovered = skip;
  }

  /** Opens the store at `path`, making its log when missing. */
  static open(path: string, options: CompactingOptions = {}): CompactingStore {
    return typedIo(path, () => {
      const lock = Deno.openSync(`${path}.lock`, { read: true, write: true, create: true });
      lock.lockSync(true);
      try {
        let made = false;
        try {
          Deno.statSync(`${path}.log`);
        } catch (error) {
          if (!(error instanceof Deno.errors.NotFound)) throw error;
          made = true;
        }
        const log = Deno.openSync(`${path}.log`, { read: true, append: true, create: true });
        if (made) syncFolder(folderOf(path));
        return new CompactingStore(path, { lock, log }, options.skipCovered ?? true);
      } finally {
        lock.unlockSync();
      }
    });
  }

  #locked<T>(exclusive: boolean, run: () => T): T {
    return typedIo(this.#path, () => {
      this.#lock.lockSync(exclusive);
      try {
        return run();
      } finally {
        this.#lock.unlockSync();
      }
    });
  }

  #readSnapshot(): Snapshot {
    let text: string;
    try {
      text = Deno.readTextFileSync(this.#path);
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return { seq: 0, sessions: [], messages: [] };
      throw error;
    }
    try {
      return JSON.parse(text);
    } catch (error) {
      throw new CorruptStoreError(`Cannot read store "${this.#path}": its snapshot: ${error}`);
    }
  }

  /** The state: the snapshot, then the log's whole lines; a torn tail cut when exclusive. */
  #load(exclusive: boolean): { state: Snapshot; lines: number; size: number } {
    const state = this.#readSnapshot();
    const bytes = Deno.readFileSync(`${this.#path}.log`);
    const texts = new TextDecoder().decode(bytes).split("\n");
    let size = 0;
    let lines = 0;
    for (const [i, text] of texts.slice(0, -1).entries()) {
      const line = parseLine(text);
      if (!line) {
        if (texts.slice(i + 1, -1).some((rest) => rest.trim())) {
          throw new CorruptStoreError(`Cannot read store "${this.#path}": log line ${i + 1}`);
        }
        break;
      }
      size += new TextEncoder().encode(`${text}\n`).length;
      lines++;
      if (this.#skipCovered && line.seq <= state.seq) continue;
      state.seq = Math.max(state.seq, line.seq);
      if (line.t === "session") state.sessions.push(line.id);
      else state.messages.push({ ...line });
    }
    if (exclusive && size < bytes.length) {
      this.#log.truncateSync(size);
      this.#log.syncSync();
    }
    return { state, lines, size };
  }

  #compact(state: Snapshot): void {
    const temporary = `${this.#path}.${Deno.pid}.tmp`;
    const file = Deno.openSync(temporary, { write: true, create: true, truncate: true });
    try {
      const bytes = new TextEncoder().encode(JSON.stringify(state));
      let written = 0;
      while (written < bytes.length) written += file.writeSync(bytes.subarray(written));
      file.syncSync();
    } finally {
      file.close();
    }
    Deno.renameSync(temporary, this.#path);
    syncFolder(folderOf(this.#path));
    this.#log.truncateSync(0);
    this.#log.syncSync();
  }

  #append(make: (state: Snapshot) => Change | undefined): Line | undefined {
    return this.#locked(true, () => {
      const { state, lines, size } = this.#load(true);
      const change = make(state);
      if (!change) return undefined;
      const line: Line = { seq: state.seq + 1, ...change };
      const bytes = new TextEncoder().encode(JSON.stringify(line) + "\n");
      try {
        let written = 0;
        while (written < bytes.length) written += this.#log.writeSync(bytes.subarray(written));
        this.#log.syncDataSync();
      } catch (error) {
        try {
          this.#log.truncateSync(size);
        } catch { /* the next exclusive load cuts a torn tail */ }
        throw new StorageError(`Cannot append to store "${this.#path}": ${error}`, {
          cause: error,
        });
      }
      if (lines + 1 >= COMPACT_EVERY) {
        state.seq = line.seq;
        if (line.t === "session") state.sessions.push(line.id);
        else state.messages.push({ ...line });
        try {
          this.#compact(state);
        } catch { /* the log still holds every line: the next append compacts */ }
      }
      return line;
    });
  }

  /** Creates a session, keeping an existing one. */
  createSession(id: string): void {
    this.#append((state) => state.sessions.includes(id) ? undefined : { t: "session", id });
  }

  /** Appends a message; returns its id once it is on disk. */
  appendMessage(sessionId: string, message: CellMessage): number {
    const line = this.#append((state) => {
      if (!state.sessions.includes(sessionId)) {
        throw new UnknownSessionError(`Cannot append to session "${sessionId}": not found`);
      }
      const id = (state.messages.at(-1)?.id ?? 0) + 1;
      return { t: "message", id, session: sessionId, ...message };
    });
    return (line as Extract<Line, { t: "message" }>).id;
  }

  #state(): Snapshot {
    return this.#locked(false, () => this.#load(false)).state;
  }

  /** The store's transcript as its files hold it now. */
  protected transcript(): Transcript {
    return this.#state();
  }

  /** Closes the store. */
  close(): void {
    this.#log.close();
    this.#lock.close();
  }
}
