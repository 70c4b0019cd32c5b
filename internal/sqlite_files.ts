// How SQLite's files announce themselves on disk: a database file's header string and a
// rollback journal header's magic number (https://sqlite.org/fileformat2.html).

const DATABASE_HEADER = "SQLite format 3\0";

/** The 8 bytes a live rollback journal header starts with. */
export const JOURNAL_MAGIC: readonly number[] = [0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7];

/**
 * Whether `bytes` start with a SQLite database file's header string (a file cut shorter
 * than its header may still be one that was cut).
 *
 * @param bytes The file's first bytes (16 are enough).
 * @returns `true` when the header string is there.
 */
export function startsWithDatabaseHeader(bytes: Uint8Array): boolean {
  for (let i = 0; i < DATABASE_HEADER.length; i++) {
    if (bytes[i] !== DATABASE_HEADER.charCodeAt(i)) return false;
  }
  return true;
}

/**
 * Whether `bytes` start as a SQLite database file does: its header string, and the
 * 100-byte header in full.
 *
 * @param bytes The file's content, or at least its first 100 bytes.
 * @returns `true` for a SQLite database file's header.
 */
export function hasDatabaseHeader(bytes: Uint8Array): boolean {
  return bytes.length >= 100 && startsWithDatabaseHeader(bytes);
}

/**
 * Whether `bytes` hold a rollback journal header's magic at `at`.
 *
 * @param bytes A journal's content.
 * @param at Where a header starts (0, or a later segment's sector boundary).
 * @returns `true` when all 8 bytes of the magic are there.
 */
export function hasJournalMagic(bytes: Uint8Array, at = 0): boolean {
  for (let i = 0; i < JOURNAL_MAGIC.length; i++) {
    if (bytes[at + i] !== JOURNAL_MAGIC[i]) return false;
  }
  return true;
}
