// SQLite's numeric constants, named as in sqlite3.h (https://sqlite.org/c3ref/constlist.html),
// so that no file writes a bare result code or flag.

// --- primary result codes (`SqliteError.code`) ---------------------------------------

/** Successful result. */
export const SQLITE_OK = 0;
/** Generic error (e.g. a syntax error or a missing table). */
export const SQLITE_ERROR = 1;
/** Internal logic error in SQLite. */
export const SQLITE_INTERNAL = 2;
/** Access permission denied. */
export const SQLITE_PERM = 3;
/** A callback requested an abort. */
export const SQLITE_ABORT = 4;
/** The database file is locked by another connection. */
export const SQLITE_BUSY = 5;
/** A table in the database is locked (by this connection's other work). */
export const SQLITE_LOCKED = 6;
/** A malloc() failed. */
export const SQLITE_NOMEM = 7;
/** An attempt to write a read-only database. */
export const SQLITE_READONLY = 8;
/** The operation was interrupted by sqlite3_interrupt(). */
export const SQLITE_INTERRUPT = 9;
/** A disk I/O error occurred. */
export const SQLITE_IOERR = 10;
/** The database disk image is malformed. */
export const SQLITE_CORRUPT = 11;
/** Unknown opcode in sqlite3_file_control(). */
export const SQLITE_NOTFOUND = 12;
/** Insertion failed because the database (or the disk) is full. */
export const SQLITE_FULL = 13;
/** Unable to open the database file. */
export const SQLITE_CANTOPEN = 14;
/** Database lock protocol error. */
export const SQLITE_PROTOCOL = 15;
/** Internal use only. */
export const SQLITE_EMPTY = 16;
/** The database schema changed. */
export const SQLITE_SCHEMA = 17;
/** A string or blob exceeds the size limit. */
export const SQLITE_TOOBIG = 18;
/** Abort due to a constraint violation. */
export const SQLITE_CONSTRAINT = 19;
/** Data type mismatch. */
export const SQLITE_MISMATCH = 20;
/** The library was used incorrectly (e.g. a finalized statement or a closed database). */
export const SQLITE_MISUSE = 21;
/** Uses OS features not supported on the host. */
export const SQLITE_NOLFS = 22;
/** Authorization denied. */
export const SQLITE_AUTH = 23;
/** Not used. */
export const SQLITE_FORMAT = 24;
/** A bind parameter index is out of range (or a value is missing). */
export const SQLITE_RANGE = 25;
/** The file opened is not a database file. */
export const SQLITE_NOTADB = 26;
/** Notifications from sqlite3_log(). */
export const SQLITE_NOTICE = 27;
/** Warnings from sqlite3_log(). */
export const SQLITE_WARNING = 28;
/** sqlite3_step() has another row ready. */
export const SQLITE_ROW = 100;
/** sqlite3_step() has finished executing. */
export const SQLITE_DONE = 101;

// --- extended result codes (`SqliteError.extendedCode`) ------------------------------

/** An I/O error while writing (xWrite). */
export const SQLITE_IOERR_WRITE = SQLITE_IOERR | (3 << 8);
/** An I/O error while syncing (xSync). */
export const SQLITE_IOERR_FSYNC = SQLITE_IOERR | (4 << 8);
/** An I/O error while truncating (xTruncate). */
export const SQLITE_IOERR_TRUNCATE = SQLITE_IOERR | (6 << 8);
/** An I/O error while deleting a file (xDelete). */
export const SQLITE_IOERR_DELETE = SQLITE_IOERR | (10 << 8);
/** An I/O error while closing a file (xClose). */
export const SQLITE_IOERR_CLOSE = SQLITE_IOERR | (16 << 8);

// --- open flags (sqlite3_open_v2 and a VFS's xOpen) ----------------------------------

/** Open read-only. */
export const SQLITE_OPEN_READONLY = 0x1;
/** Open for reading and writing. */
export const SQLITE_OPEN_READWRITE = 0x2;
/** Create the file when it is missing. */
export const SQLITE_OPEN_CREATE = 0x4;
/** Interpret the file name as a URI. */
export const SQLITE_OPEN_URI = 0x40;
/** Open an in-memory database. */
export const SQLITE_OPEN_MEMORY = 0x80;
/** xOpen: the main database file. */
export const SQLITE_OPEN_MAIN_DB = 0x100;
/** xOpen: the rollback journal of the main database. */
export const SQLITE_OPEN_MAIN_JOURNAL = 0x800;
/** xOpen: a super-journal (multi-database commit). */
export const SQLITE_OPEN_SUPER_JOURNAL = 0x4000;
/** The connection uses no mutex (one thread per connection). */
export const SQLITE_OPEN_NOMUTEX = 0x8000;
/** xOpen: the write-ahead log. */
export const SQLITE_OPEN_WAL = 0x80000;

// --- column types (sqlite3_column_type) ----------------------------------------------

/** A 64-bit signed integer. */
export const SQLITE_INTEGER = 1;
/** A 64-bit IEEE float. */
export const SQLITE_FLOAT = 2;
/** A UTF-8 string. */
export const SQLITE_TEXT = 3;
/** A blob. */
export const SQLITE_BLOB = 4;
/** NULL. */
export const SQLITE_NULL = 5;

// --- other ---------------------------------------------------------------------------

/** sqlite3_config() option: turn memory statistics on or off. */
export const SQLITE_CONFIG_MEMSTATUS = 9;
/**
 * The destructor argument of sqlite3_bind_text/blob that makes SQLite copy the value
 * before the call returns (`(sqlite3_destructor_type)-1`), as an `isize`.
 */
export const SQLITE_TRANSIENT: bigint = -1n;
