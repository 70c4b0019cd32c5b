// The recording VFS's log: an append-only binary file, one record per file-system
// operation, each written with one `write` call after the real operation returned.
// A SIGKILL can leave only the last record torn (short); the reader drops it. The
// format is private to session_db/ (recording_vfs.ts writes it, crash_states.ts reads it).
//
// Record: a 32-byte little-endian header, then `length` payload bytes.
//   0  u32  magic 0x564c4f47 ("GOLV")
//   4  u8   kind (see RecordKind)
//   5  u8   flag (delete: 1 when the directory was synced; sync: SQLite's sync flags)
//   6  u16  reserved (0)
//   8  u32  file id (open, write, truncate, sync, close)
//   12 u32  payload length
//   16 u64  offset (write), size (truncate), open flags (open)
//   24 u32  sequence number (0, 1, 2, …)
//   28 u32  header checksum (FNV-1a of bytes 0..28)
// Payloads: open and delete carry the UTF-8 path; write carries the bytes written.

/** The header size. */
export const HEADER_SIZE = 32;
const MAGIC = 0x564c4f47;

/** The kinds of record. */
export const RecordKind = {
  open: 1,
  write: 2,
  truncate: 3,
  sync: 4,
  delete: 5,
  close: 6,
} as const;

/** One operation read back from the log. */
export type LogRecord =
  | { kind: "open"; seq: number; file: number; path: string; flags: number }
  | { kind: "write"; seq: number; file: number; offset: number; data: Uint8Array }
  | { kind: "truncate"; seq: number; file: number; size: number }
  | { kind: "sync"; seq: number; file: number; flags: number }
  | { kind: "delete"; seq: number; path: string; dirSync: boolean }
  | { kind: "close"; seq: number; file: number };

/** What {@linkcode readVfsLog} found. */
export interface VfsLog {
  /** The complete records, in order. */
  records: LogRecord[];
  /** Bytes dropped at the end: a record torn by the kill (0 when none). */
  tornBytes: number;
}

/** Raised when a record other than the last is damaged. */
export class VfsLogError extends Error {
  /** Creates the error. */
  constructor(message: string) {
    super(message);
    this.name = "VfsLogError";
  }
}

function checksum(bytes: Uint8Array, end: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < end; i++) hash = Math.imul(hash ^ bytes[i]!, 0x01000193);
  return hash >>> 0;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function writeHeader(
  record: Uint8Array,
  view: DataView,
  kind: number,
  seq: number,
  file: number,
  value: number,
  flag: number,
  length: number,
): void {
  view.setUint32(0, MAGIC, true);
  record[4] = kind;
  record[5] = flag;
  view.setUint16(6, 0, true);
  view.setUint32(8, file, true);
  view.setUint32(12, length, true);
  // A u64 as two u32 halves: no BigInt on the hot path.
  view.setUint32(16, value >>> 0, true);
  view.setUint32(20, Math.floor(value / 0x100000000), true);
  view.setUint32(24, seq >>> 0, true);
  view.setUint32(28, checksum(record, 28), true);
}

/** Builds one record (for tests and rare records; the writer reuses one buffer). */
export function encodeRecord(
  kind: number,
  seq: number,
  file: number,
  value: number,
  flag: number,
  payload: Uint8Array | string,
): Uint8Array {
  const body = typeof payload === "string" ? encoder.encode(payload) : payload;
  const record = new Uint8Array(HEADER_SIZE + body.length);
  writeHeader(record, new DataView(record.buffer), kind, seq, file, value, flag, body.length);
  record.set(body, HEADER_SIZE);
  return record;
}

/**
 * Appends records to a log file, one `write` call per record, through one reused
 * buffer: {@linkcode LogWriter.reserve} returns the payload to fill, then
 * {@linkcode LogWriter.commit} writes the record.
 */
export class LogWriter {
  #file: Deno.FsFile;
  #buffer = new Uint8Array(64 * 1024);
  #view = new DataView(this.#buffer.buffer);
  #length = 0;
  /** Records written. */
  records = 0;

  /**
   * Opens the log for appending (created when missing).
   *
   * @param path The log file.
   */
  constructor(path: string) {
    this.#file = Deno.openSync(path, { append: true, create: true });
  }

  /**
   * Starts a record and returns its payload, `length` bytes to fill before
   * {@linkcode LogWriter.commit}.
   */
  reserve(kind: number, file: number, value: number, flag: number, length: number): Uint8Array {
    const size = HEADER_SIZE + length;
    if (size > this.#buffer.length) {
      this.#buffer = new Uint8Array(Math.max(size, this.#buffer.length * 2));
      this.#view = new DataView(this.#buffer.buffer);
    }
    writeHeader(this.#buffer, this.#view, kind, this.records, file, value, flag, length);
    this.#length = size;
    return this.#buffer.subarray(HEADER_SIZE, size);
  }

  /** Writes the reserved record. */
  commit(): void {
    const record = this.#buffer.subarray(0, this.#length);
    let written = 0;
    while (written < record.length) written += this.#file.writeSync(record.subarray(written));
    this.records++;
  }

  /** Writes a record whose payload is a string (a path) or nothing. */
  append(kind: number, file: number, value: number, flag: number, payload = ""): void {
    const body = encoder.encode(payload);
    this.reserve(kind, file, value, flag, body.length).set(body);
    this.commit();
  }
}

/**
 * Reads a log. A short final record (the kill landed inside its write) is dropped and
 * counted in `tornBytes`; damage anywhere else throws.
 *
 * @param bytes The log file's content.
 * @param path The log's path, for messages.
 * @returns The records.
 */
export function decodeLog(bytes: Uint8Array, path = "the log"): VfsLog {
  const records: LogRecord[] = [];
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 0;
  while (at < bytes.length) {
    const rest = bytes.length - at;
    if (rest < HEADER_SIZE) return { records, tornBytes: rest };
    const header = bytes.subarray(at, at + HEADER_SIZE);
    const bad = view.getUint32(at, true) !== MAGIC ||
      view.getUint32(at + 28, true) !== checksum(header, 28);
    if (bad) {
      throw new VfsLogError(
        `Cannot read VFS log ${path}: record ${records.length} at byte ${at} is damaged (the log is not append-only or was edited; record the run again)`,
      );
    }
    const length = view.getUint32(at + 12, true);
    if (rest < HEADER_SIZE + length) return { records, tornBytes: rest };
    const seq = view.getUint32(at + 24, true);
    if (seq !== records.length) {
      throw new VfsLogError(
        `Cannot read VFS log ${path}: record ${records.length} has sequence number ${seq} (two processes wrote one log; give each writer its own log)`,
      );
    }
    const file = view.getUint32(at + 8, true);
    const value = view.getUint32(at + 16, true) + view.getUint32(at + 20, true) * 0x100000000;
    const flag = bytes[at + 5]!;
    const payload = bytes.subarray(at + HEADER_SIZE, at + HEADER_SIZE + length);
    switch (bytes[at + 4]) {
      case RecordKind.open:
        records.push({ kind: "open", seq, file, path: decoder.decode(payload), flags: value });
        break;
      case RecordKind.write:
        records.push({ kind: "write", seq, file, offset: value, data: payload.slice() });
        break;
      case RecordKind.truncate:
        records.push({ kind: "truncate", seq, file, size: value });
        break;
      case RecordKind.sync:
        records.push({ kind: "sync", seq, file, flags: flag });
        break;
      case RecordKind.delete:
        records.push({ kind: "delete", seq, path: decoder.decode(payload), dirSync: flag === 1 });
        break;
      case RecordKind.close:
        records.push({ kind: "close", seq, file });
        break;
      default:
        throw new VfsLogError(
          `Cannot read VFS log ${path}: record ${records.length} has unknown kind ${
            bytes[at + 4]
          } (written by a newer recorder; update this checker)`,
        );
    }
    at += HEADER_SIZE + length;
  }
  return { records, tornBytes: 0 };
}

/**
 * Reads a log file ({@linkcode decodeLog}); a missing file reads as empty.
 *
 * @param path The log file.
 * @returns The records.
 */
export function readVfsLog(path: string): VfsLog {
  let bytes: Uint8Array;
  try {
    bytes = Deno.readFileSync(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return { records: [], tornBytes: 0 };
    throw error;
  }
  return decodeLog(bytes, path);
}
