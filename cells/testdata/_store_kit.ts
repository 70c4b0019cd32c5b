/**
 * What the test stores that are not SQLite share (the JSON-lines log, the folder of
 * segments, the snapshot replaced by rename, the compacting log): their typed errors, the
 * folder sync that makes a name durable, and the reads of a transcript held as sessions and
 * messages.
 *
 * @module
 */
import type { StoredMessage, StoredSession } from "../contract/target.ts";

/** An append named a session the store does not hold: a refusal of the store's own type. */
export class UnknownSessionError extends Error {
  /** Creates the error. */
  constructor(message: string) {
    super(message);
    this.name = "UnknownSessionError";
  }
}

/**
 * A write or sync failed (a full disk, an I/O error): the append was not made, and its
 * bytes were cut off again where the file let the store.
 */
export class StorageError extends Error {
  /** Creates the error. */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "StorageError";
  }
}

/** The store's files are damaged: never served short. */
export class CorruptStoreError extends Error {
  /** Creates the error. */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "CorruptStoreError";
  }
}

/** Runs `run`, turning a failure of the file system (EIO, ENOSPC) into a StorageError. */
export function typedIo<T>(path: string, run: () => T): T {
  try {
    return run();
  } catch (error) {
    if (
      error instanceof StorageError || error instanceof CorruptStoreError ||
      error instanceof UnknownSessionError || !(error instanceof Error)
    ) throw error;
    throw new StorageError(`Cannot use store "${path}": ${error.message}`, { cause: error });
  }
}

/** The folder that holds `path`. */
export function folderOf(path: string): string {
  return path.slice(0, path.lastIndexOf("/")) || ".";
}

/** Syncs a folder: a name made or changed in it is durable once this returns (strict POSIX). */
export function syncFolder(folder: string): void {
  const file = Deno.openSync(folder, { read: true });
  try {
    file.syncSync();
  } finally {
    file.close();
  }
}

/** A store's content: its sessions in order of creation, its messages in id order. */
export interface Transcript {
  sessions: string[];
  messages: { id: number; session: string; role: string; content: string }[];
}

/**
 * The reads every one of these stores makes, of the transcript its subclass loads from
 * disk on each call (under its shared lock).
 */
export abstract class TranscriptReads {
  /** The store's transcript as its files hold it now. */
  protected abstract transcript(): Transcript;

  /** The session's messages in id order. */
  getMessages(sessionId: string): StoredMessage[] {
    return this.transcript().messages.flatMap((m) =>
      m.session === sessionId ? [{ id: m.id, role: m.role, content: m.content }] : []
    );
  }

  /** A session, or `undefined`. */
  getSession(id: string): StoredSession | undefined {
    return this.listSessions().find((session) => session.id === id);
  }

  /** Every session (none of these stores ends one or rotates). */
  listSessions(): StoredSession[] {
    return this.transcript().sessions.map((id) => ({
      id,
      parentSessionId: null,
      endedAt: null,
      endReason: null,
    }));
  }

  /** Broken invariants: ids not increasing, messages of unknown sessions. */
  checkInvariants(): string[] {
    const transcript = this.transcript();
    const sessions = new Set(transcript.sessions);
    const problems: string[] = [];
    let last = 0;
    for (const message of transcript.messages) {
      if (message.id <= last) problems.push(`message id ${message.id} after ${last}`);
      if (!sessions.has(message.session)) problems.push(`message ${message.id} of unknown session`);
      last = message.id;
    }
    return problems;
  }
}

/** A line of a log of sessions and messages (the JSON-lines store's, the folder store's). */
export type Line =
  | { t: "session"; id: string; at?: number }
  | { t: "message"; id: number; session: string; role: string; content: string };

/** The transcript a log's lines make. */
export function transcriptOf(lines: readonly Line[]): Transcript {
  const transcript: Transcript = { sessions: [], messages: [] };
  for (const line of lines) {
    if (line.t === "session") transcript.sessions.push(line.id);
    else transcript.messages.push(line);
  }
  return transcript;
}

/** A line of the log, or `undefined` when it is not one (torn, garbage, empty). */
export function parseLine(text: string): Line | undefined {
  try {
    const line = JSON.parse(text);
    if (line?.t === "session" && typeof line.id === "string") return line;
    if (line?.t === "message" && typeof line.id === "number") return line;
  } catch {
    // not a line of ours
  }
  return undefined;
}
