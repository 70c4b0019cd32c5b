/**
 * A store that is not SQLite: an append-only JSON-lines log, one line per session or
 * message, each append written in one `write` and synced before it returns. On open a
 * torn last line (a line without its newline) is dropped and cut off the file. Used to
 * show that the cells judge any kind of store: the journal-mode legs do not apply to it.
 *
 * @module
 */
import type { CellMessage, StoredMessage, StoredSession } from "../../target.ts";

type Line =
  | { t: "session"; id: string; at: number }
  | { t: "message"; id: number; session: string; role: string; content: string };

/** Options of {@linkcode JsonlStore.open}. */
export interface JsonlOptions {
  /** Keep a lock file beside the log while open, and refuse to open while it exists. */
  lockFile?: boolean;
}

/** The JSON-lines store. */
export class JsonlStore {
  #file: Deno.FsFile;
  #lines: Line[];
  #lock: string | undefined;
  #encoder = new TextEncoder();

  private constructor(file: Deno.FsFile, lines: Line[], lock: string | undefined) {
    this.#file = file;
    this.#lines = lines;
    this.#lock = lock;
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
    const file = Deno.openSync(path, { read: true, write: true, create: true });
    const bytes = Deno.readFileSync(path);
    const text = new TextDecoder().decode(bytes);
    const end = text.lastIndexOf("\n") + 1;
    if (end < text.length) {
      // A torn tail: an append that never finished. It was never acknowledged.
      file.truncateSync(new TextEncoder().encode(text.slice(0, end)).length);
      file.syncSync();
    }
    const lines = text.slice(0, end).split("\n").filter((line) => line).map((line, i) => {
      try {
        return JSON.parse(line) as Line;
      } catch (error) {
        throw new Error(`Cannot open store "${path}": line ${i + 1} is corrupt`, { cause: error });
      }
    });
    file.seekSync(0, Deno.SeekMode.End);
    return new JsonlStore(file, lines, lock);
  }

  #append(line: Line): void {
    const bytes = this.#encoder.encode(JSON.stringify(line) + "\n");
    let written = 0;
    while (written < bytes.length) written += this.#file.writeSync(bytes.subarray(written));
    this.#file.syncDataSync();
    this.#lines.push(line);
  }

  /** Creates a session, keeping an existing one. */
  createSession(id: string): void {
    if (this.getSession(id)) return;
    this.#append({ t: "session", id, at: Date.now() });
  }

  /** Appends a message; returns its id once it is on disk. */
  appendMessage(sessionId: string, message: CellMessage): number {
    if (!this.getSession(sessionId)) throw new Error(`Unknown session "${sessionId}"`);
    const last = this.#lines.findLast((line) => line.t === "message");
    const id = last?.t === "message" ? last.id + 1 : 1;
    this.#append({ t: "message", id, session: sessionId, ...message });
    return id;
  }

  /** The session's messages in id order. */
  getMessages(sessionId: string): StoredMessage[] {
    return this.#lines.flatMap((line) =>
      line.t === "message" && line.session === sessionId
        ? [{ id: line.id, role: line.role, content: line.content }]
        : []
    );
  }

  /** A session, or `undefined`. */
  getSession(id: string): StoredSession | undefined {
    return this.listSessions().find((session) => session.id === id);
  }

  /** Every session. */
  listSessions(): StoredSession[] {
    return this.#lines.flatMap((line) =>
      line.t === "session"
        ? [{ id: line.id, parentSessionId: null, endedAt: null, endReason: null }]
        : []
    );
  }

  /** Broken invariants: ids not increasing, messages of unknown sessions. */
  checkInvariants(): string[] {
    const problems: string[] = [];
    const sessions = new Set<string>();
    let last = 0;
    for (const line of this.#lines) {
      if (line.t === "session") sessions.add(line.id);
      else {
        if (line.id <= last) problems.push(`message id ${line.id} after ${last}`);
        if (!sessions.has(line.session)) problems.push(`message ${line.id} of unknown session`);
        last = line.id;
      }
    }
    return problems;
  }

  /** Closes the log (and removes its lock file). */
  close(): void {
    this.#file.close();
    if (this.#lock) Deno.removeSync(this.#lock);
  }
}
