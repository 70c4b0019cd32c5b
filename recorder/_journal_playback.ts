// What SQLite's playback of a hot rollback journal leaves in the database file, computed
// the way pager.c's `pager_playback` reads the journal: the first header's magic, sizes,
// record count and original page count; each record's page number and checksum; later
// segments at the header's sector boundaries; a short read ends the playback. A journal
// this model does not cover (see `rolledBack`) gets no answer: its states are compared
// whole.
import { hasJournalMagic } from "../internal/sqlite_files.ts";

/**
 * The sector size a reader assumes until it has read the first header: 512 on unix with
 * powersafe overwrite (the default), 4096 without. A journal shorter than the larger is
 * not modelled, so the model never depends on which.
 */
const READER_SECTOR = 512;
const READER_SECTOR_MAX = 4096;
const MAX_PAGE = 65536;
const MAX_SECTOR = 0x10000;
/** SQLite's `PENDING_BYTE`: the page holding it is never journaled. */
const PENDING_BYTE = 0x40000000;

function isPowerOfTwo(n: number): boolean {
  return n > 0 && (n & (n - 1)) === 0;
}

/** A growable copy of the database file, written as playback writes it. */
class DatabaseFile {
  #bytes: Uint8Array;
  #size: number;

  constructor(db: Uint8Array) {
    this.#bytes = db.slice();
    this.#size = db.length;
  }

  write(data: Uint8Array, at: number): void {
    const end = at + data.length;
    if (end > this.#bytes.length) {
      const grown = new Uint8Array(Math.max(end, this.#bytes.length * 2));
      grown.set(this.#bytes.subarray(0, this.#size));
      this.#bytes = grown;
    } else if (at > this.#size) {
      // A write past the end leaves a hole of zeros (after a truncation, stale bytes).
      this.#bytes.fill(0, this.#size, at);
    }
    this.#bytes.set(data, at);
    this.#size = Math.max(this.#size, end);
  }

  /** `pager_truncate`: cut to `size`, or grow to it by one zeroed page at its end. */
  truncate(size: number, pageSize: number): void {
    if (this.#size > size) this.#size = size;
    else if (this.#size + pageSize <= size) this.write(new Uint8Array(pageSize), size - pageSize);
  }

  /** The file's bytes (a view: the file is not written after). */
  content(): Uint8Array {
    return this.#bytes.subarray(0, this.#size);
  }
}

/**
 * The database file SQLite's recovery leaves after playing back `journal`, a hot rollback
 * journal (its first byte not 0) beside `db`; `undefined` when the journal holds what this
 * model does not read (shorter than 4096 bytes, a super-journal name, a record count of
 * `0xffffffff` after the first header, a page size of 0, an original size far past both
 * files): compare such states whole.
 */
export function rolledBack(db: Uint8Array, journal: Uint8Array): Uint8Array | undefined {
  const size = journal.length;
  if (size < READER_SECTOR_MAX) return undefined;
  // A super-journal name ends with the magic; its playback depends on another file.
  if (hasJournalMagic(journal, size - 8)) return undefined;
  const view = new DataView(journal.buffer, journal.byteOffset, journal.byteLength);
  const file = new DatabaseFile(db);
  let sector = READER_SECTOR;
  let pageSize = 0;
  let dbSize = 0;
  let at = 0;
  for (let first = true;; first = false) {
    // readJournalHdr: the next header starts at a sector boundary.
    if (at > 0) at = Math.ceil(at / sector) * sector;
    if (at + sector > size || !hasJournalMagic(journal, at)) break;
    let records = view.getUint32(at + 8);
    const checksumInit = view.getUint32(at + 12);
    if (first) {
      const sectorSize = view.getUint32(at + 20);
      const headerPageSize = view.getUint32(at + 24);
      if (headerPageSize === 0) return undefined;
      if (
        headerPageSize < 512 || sectorSize < 32 || headerPageSize > MAX_PAGE ||
        sectorSize > MAX_SECTOR || !isPowerOfTwo(headerPageSize) || !isPowerOfTwo(sectorSize)
      ) break;
      sector = sectorSize;
      pageSize = headerPageSize;
      dbSize = view.getUint32(at + 16);
    }
    at += sector;
    if (records === 0xffffffff) {
      if (!first) return undefined;
      records = Math.floor((size - sector) / (pageSize + 8));
    }
    if (first) {
      // A header page count far past both files (a flipped bit) makes SQLite grow the file
      // sparsely to it: no image worth holding in memory.
      if (dbSize * pageSize > 2 * (db.length + size) + pageSize) return undefined;
      file.truncate(dbSize * pageSize, pageSize);
    }
    const pendingPage = Math.floor(PENDING_BYTE / pageSize) + 1;
    for (let record = 0; record < records; record++) {
      // A short read of any part ends the playback; a bad record ends the journal.
      if (at + 4 + pageSize > size) return file.content();
      const page = view.getUint32(at);
      const data = journal.subarray(at + 4, at + 4 + pageSize);
      at += pageSize + 8;
      if (page === 0 || page === pendingPage) return file.content();
      if (page > dbSize) continue;
      if (at > size) return file.content();
      let checksum = checksumInit;
      for (let i = pageSize - 200; i > 0; i -= 200) checksum = (checksum + data[i]!) >>> 0;
      if (checksum !== view.getUint32(at - 4)) return file.content();
      file.write(data, (page - 1) * pageSize);
    }
  }
  return file.content();
}
