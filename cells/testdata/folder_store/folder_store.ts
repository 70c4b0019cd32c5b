/**
 * A store that makes its path a folder, laid out like LevelDB or a Kafka partition:
 * numbered segment files of JSON lines, a new segment every {@linkcode LINES_PER_SEGMENT}
 * lines, and a `LOCK` file whose `flock` writers hold. Each append is one write and one
 * `fdatasync`; the folder is synced into its parent when made, and a new segment into the
 * folder, before anything in them is acknowledged. A torn tail of the last segment is
 * dropped; a failed write or sync is cut off again before it is refused. Used to show that
 * the tiers judge a store whose path is not a file.
 *
 * @module
 */
import type { CellMessage } from "../../contract/target.ts";
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

/** How many lines a segment holds before the next one is made. */
export const LINES_PER_SEGMENT = 16;

/** Options of {@linkcode FolderStore.open}; each `false` is a planted fault. */
export interface FolderOptions {
  /** Sync the folder after making a new segment in it (default true). */
  syncNewSegment?: boolean;
}

const segmentName = (n: number) => `segment-${String(n).padStart(6, "0")}.log`;

/** What the segments hold: their lines, the last segment's number and its line count. */
interface Loaded {
  lines: Line[];
  last: number;
  lastLines: number;
}

/** The folder store. */
export class FolderStore extends TranscriptReads {
  #folder: string;
  #lock: Deno.FsFile;
  #syncNewSegment: boolean;

  private constructor(folder: string, lock: Deno.FsFile, options: FolderOptions) {
    super();
    this.#folder = folder;
    this.#lock = lock;
    this.#syncNewSegment = options.syncNewSegment ?? true;
  }

  /** Opens the store in the folder `path`, making it when missing. */
  static open(path: string, options: FolderOptions = {}): FolderStore {
    return typedIo(path, () => {
      try {
        Deno.mkdirSync(path);
        syncFolder(folderOf(path));
      } catch (error) {
        if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
      }
      const lock = Deno.openSync(`${path}/LOCK`, { read: true, write: true, create: true });
      return new FolderStore(path, lock, options);
    });
  }

  #locked<T>(exclusive: boolean, run: () => T): T {
    return typedIo(this.#folder, () => {
      this.#lock.lockSync(exclusive);
      try {
        return run();
      } finally {
        this.#lock.unlockSync();
      }
    });
  }

  #segments(): number[] {
    return [...Deno.readDirSync(this.#folder)]
      .map((entry) => /^segment-(\d{6})\.log$/.exec(entry.name)?.[1])
      .flatMap((digits) => digits === undefined ? [] : [Number(digits)])
      .sort((a, b) => a - b);
  }

  /** Every whole line; under the exclusive lock, a torn tail of the last segment is cut. */
  #load(exclusive: boolean): Loaded {
    const segments = this.#segments();
    const loaded: Loaded = { lines: [], last: segments.at(-1) ?? 0, lastLines: 0 };
    for (const [i, n] of segments.entries()) {
      const path = `${this.#folder}/${segmentName(n)}`;
      const bytes = Deno.readFileSync(path);
      const texts = new TextDecoder().decode(bytes).split("\n");
      const parsed = texts.map(parseLine);
      const whole = parsed.findLastIndex((line, j) => line !== undefined && j < texts.length - 1) +
        1;
      const last = i === segments.length - 1;
      if (parsed.slice(0, whole).includes(undefined) || (!last && whole !== LINES_PER_SEGMENT)) {
        throw new CorruptStoreError(
          `Cannot read store "${this.#folder}": ${
            segmentName(n)
          } is damaged (restore it from a backup)`,
        );
      }
      const size = new TextEncoder().encode(texts.slice(0, whole).map((t) => `${t}\n`).join(""))
        .length;
      if (exclusive && size < bytes.length) cutTo(path, size);
      loaded.lines.push(...parsed.slice(0, whole) as Line[]);
      if (last) loaded.lastLines = whole;
    }
    return loaded;
  }

  #append(make: (lines: Line[]) => Line | undefined): Line | undefined {
    return this.#locked(true, () => {
      const { lines, last, lastLines } = this.#load(true);
      const line = make(lines);
      if (!line) return undefined;
      const fresh = last === 0 || lastLines >= LINES_PER_SEGMENT;
      const path = `${this.#folder}/${segmentName(fresh ? last + 1 : last)}`;
      const file = Deno.openSync(path, { read: true, append: true, create: true });
      try {
        if (fresh && this.#syncNewSegment) syncFolder(this.#folder);
        writeLine(file, new TextEncoder().encode(JSON.stringify(line) + "\n"));
      } finally {
        file.close();
      }
      return line;
    });
  }

  /** Creates a session, keeping an existing one. */
  createSession(id: string): void {
    this.#append((lines) =>
      lines.some((line) => line.t === "session" && line.id === id)
        ? undefined
        : { t: "session", id }
    );
  }

  /** Appends a message; returns its id once it is on disk. */
  appendMessage(sessionId: string, message: CellMessage): number {
    const line = this.#append((lines) => {
      if (!lines.some((l) => l.t === "session" && l.id === sessionId)) {
        throw new UnknownSessionError(`Cannot append to session "${sessionId}": not found`);
      }
      const last = lines.findLast((l) => l.t === "message");
      const id = last?.t === "message" ? last.id + 1 : 1;
      return { t: "message", id, session: sessionId, ...message };
    });
    return (line as Extract<Line, { t: "message" }>).id;
  }

  #read(): Line[] {
    return this.#locked(false, () => this.#load(false)).lines;
  }

  /** The store's transcript as its files hold it now. */
  protected transcript(): Transcript {
    return transcriptOf(this.#read());
  }

  /** Closes the store. */
  close(): void {
    this.#lock.close();
  }
}

/** Writes and syncs a whole line, or cuts what was written of it and throws. */
function writeLine(file: Deno.FsFile, bytes: Uint8Array): void {
  const size = file.statSync().size;
  try {
    let written = 0;
    while (written < bytes.length) written += file.writeSync(bytes.subarray(written));
    file.syncDataSync();
  } catch (error) {
    // A failed sync leaves pages the kernel counts clean: never write past them.
    try {
      file.truncateSync(size);
    } catch { /* the next exclusive load cuts a torn tail */ }
    throw new StorageError(`Cannot append to store: ${error}`, { cause: error });
  }
}

function cutTo(path: string, size: number): void {
  const file = Deno.openSync(path, { write: true });
  try {
    file.truncateSync(size);
    file.syncSync();
  } finally {
    file.close();
  }
}
