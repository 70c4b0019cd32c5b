// How much of a WAL file SQLite's recovery keeps, read as SQLite reads it (the WAL format
// of https://sqlite.org/fileformat2.html#walformat and walIndexRecover): two crash states
// that agree on the database file and on their WAL up to its last valid commit frame
// recover to the same files, whatever the bytes after it (torn or unsynced frames).

const HEADER = 32;
const FRAME_HEADER = 24;
const MAGIC = 0x377f0682;
const VERSION = 3007000;

/** The part of a WAL that recovery keeps. */
export interface WalKept {
  /** Frames SQLite's recovery keeps: up to and including the last valid commit frame. */
  frames: number;
  /** The bytes they end at: the header and those frames. */
  end: number;
}

function word(bytes: Uint8Array, at: number): number {
  return ((bytes[at]! << 24) | (bytes[at + 1]! << 16) | (bytes[at + 2]! << 8) | bytes[at + 3]!) >>>
    0;
}

const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/** A WAL's 32-bit words as its checksums read them. */
interface Words {
  view: DataView;
  /** The words as this machine reads them, when that is the checksums' order. */
  native?: Uint32Array;
  bigEndian: boolean;
}

function wordsOf(wal: Uint8Array, bigEndian: boolean): Words {
  const view = new DataView(wal.buffer, wal.byteOffset, wal.byteLength);
  const native = bigEndian !== LITTLE_ENDIAN && wal.byteOffset % 4 === 0
    ? new Uint32Array(wal.buffer, wal.byteOffset, wal.byteLength >> 2)
    : undefined;
  return native ? { view, native, bigEndian } : { view, bigEndian };
}

/**
 * SQLite's WAL checksum (`walChecksumBytes`), continued from `sum`: over 32-bit words
 * read big-endian when the WAL says so, else little-endian, two at a time.
 */
function checksum(words: Words, range: { from: number; to: number }, sum: [number, number]): void {
  let [s1, s2] = sum;
  const { native, view } = words;
  if (native) {
    for (let i = range.from >> 2; i < range.to >> 2; i += 2) {
      s1 = (s1 + native[i]! + s2) >>> 0;
      s2 = (s2 + native[i + 1]! + s1) >>> 0;
    }
  } else {
    const littleEndian = !words.bigEndian;
    for (let at = range.from; at < range.to; at += 8) {
      s1 = (s1 + view.getUint32(at, littleEndian) + s2) >>> 0;
      s2 = (s2 + view.getUint32(at + 4, littleEndian) + s1) >>> 0;
    }
  }
  sum[0] = s1;
  sum[1] = s2;
}

/**
 * What SQLite's recovery keeps of a WAL file, or `undefined` when its header is not one
 * SQLite would read frames from (too short, another magic or version, a page size out
 * of range, a header checksum that does not match): callers then take the file whole.
 *
 * @param wal The WAL file's bytes.
 * @returns The frames kept and the offset they end at.
 */
export function walKept(wal: Uint8Array): WalKept | undefined {
  if (wal.length < HEADER) return undefined;
  const magic = word(wal, 0);
  const pageSize = word(wal, 8);
  if (
    (magic & 0xfffffffe) !== MAGIC || word(wal, 4) !== VERSION ||
    pageSize < 512 || pageSize > 65536 || (pageSize & (pageSize - 1)) !== 0
  ) {
    return undefined;
  }
  const words = wordsOf(wal, (magic & 1) === 1);
  const sum: [number, number] = [0, 0];
  checksum(words, { from: 0, to: 24 }, sum);
  if (sum[0] !== word(wal, 24) || sum[1] !== word(wal, 28)) return undefined;
  const frameSize = FRAME_HEADER + pageSize;
  const last = Math.floor((wal.length - HEADER) / frameSize);
  let kept = 0;
  for (let frame = 1; frame <= last; frame++) {
    const at = HEADER + (frame - 1) * frameSize;
    // A frame is valid when its salts are the header's, its page number is not 0 and the
    // running checksum over its header's first 8 bytes and its page matches.
    if (word(wal, at + 8) !== word(wal, 16) || word(wal, at + 12) !== word(wal, 20)) break;
    if (word(wal, at) === 0) break;
    checksum(words, { from: at, to: at + 8 }, sum);
    checksum(words, { from: at + FRAME_HEADER, to: at + frameSize }, sum);
    if (sum[0] !== word(wal, at + 16) || sum[1] !== word(wal, at + 20)) break;
    if (word(wal, at + 4) !== 0) kept = frame;
  }
  return { frames: kept, end: HEADER + kept * frameSize };
}
