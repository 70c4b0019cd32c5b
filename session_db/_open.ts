// Opening a session database: the file created private, the schema migrated, and the
// journal-mode resolver applied.
import { dirname } from "../internal/path.ts";
import { Database, sqliteVersion } from "./sqlite/database.ts";
import { MIGRATIONS, STORE_SCHEMA_VERSION } from "./schema.ts";
import { armedCrashPoint } from "./crash_points.ts";
import {
  decideJournalMode,
  DEFAULT_JOURNAL_MODE,
  type JournalMode,
  journalModeFromEnv,
} from "./journal_mode.ts";
import {
  BusyDeadlineError,
  SchemaVersionError,
  SessionDBError,
  SessionDBOpenError,
} from "./errors.ts";
import { Connection, errorDetail, oneOff, untilNotBusy } from "./_connection.ts";
import { checkOpenArguments } from "./_validate.ts";
import type { SessionDBOptions } from "./types.ts";

/** Opens, migrates and configures a session database (see {@linkcode SessionDB.open}). */
export function openConnection(path: string, options: SessionDBOptions): Connection {
  checkOpenArguments(path, options);
  armedCrashPoint(); // an unknown crash point is an error at open, not silence
  const readonly = options.readonly === true;
  const busyTimeoutMs = options.busyTimeoutMs ?? 1000;
  const busyDeadlineMs = options.busyDeadlineMs ?? 20_000;
  // Appends wait longer by default (an acknowledged append is the store's core promise),
  // but an explicit deadline applies to every write.
  const appendDeadlineMs = options.busyDeadlineMs ?? 60_000;
  const fail = (detail: string, cause?: unknown) =>
    new SessionDBOpenError(`Cannot open session database "${path}": ${detail}`, { cause });

  if (!readonly) createPrivateFile(path, fail);
  let db: Database;
  const vfs = options.vfs;
  try {
    db = new Database(path, { readonly, create: !readonly, ...(vfs ? { vfs } : {}) });
  } catch (error) {
    if (vfs && /no such vfs/.test(String(error))) {
      throw fail(`no SQLite VFS named "${vfs}" is registered (register it first)`, error);
    }
    throw fail(errorDetail(error), error);
  }
  try {
    db.setBusyTimeout(busyTimeoutMs);
    // Writers may hold the file locked past one busy timeout: the open waits like a write.
    // Leaving WAL stays busy while another connection has the file open in WAL mode.
    let switching: string | undefined;
    const opened = untilNotBusy(
      () => configure(db, path, readonly, options, fail, (from) => switching = from),
      busyDeadlineMs,
      (waited, attempts, cause) =>
        switching
          ? fail(
            `journal mode ${switching} (locked for ${waited} ms: another connection may have the file open in WAL mode: close it and retry)`,
            cause,
          )
          : new BusyDeadlineError(
            `Cannot open session database "${path}": the database stayed locked for ${waited} ms (${attempts} attempts, deadline ${busyDeadlineMs} ms): another connection kept it locked (retry later, or raise busyDeadlineMs)`,
            { cause },
          ),
    );
    const connection = new Connection(db, path, {
      journalMode: opened.mode,
      journalModeReason: opened.reason,
      busyDeadlineMs,
      appendDeadlineMs,
      readonly,
    });
    if (opened.version < STORE_SCHEMA_VERSION && !readonly) migrate(connection);
    return connection;
  } catch (error) {
    db.close();
    if (error instanceof SessionDBError) throw error;
    throw fail(errorDetail(error), error);
  }
}

/** Reads the schema version and applies the journal mode; SQLite's busy result goes through. */
function configure(
  db: Database,
  path: string,
  readonly: boolean,
  options: SessionDBOptions,
  fail: (detail: string, cause?: unknown) => Error,
  switching: (change: string) => void,
): { version: number; mode: JournalMode; reason: string } {
  const version = currentVersion(db);
  if (version > STORE_SCHEMA_VERSION) {
    throw new SchemaVersionError(
      `Cannot open session database "${path}": it has schema version ${version}, newer than ${STORE_SCHEMA_VERSION} of this store (upgrade the store; the file was left untouched)`,
    );
  }
  if (readonly) {
    if (version < STORE_SCHEMA_VERSION) {
      throw fail(
        `schema version ${version} needs a migration to ${STORE_SCHEMA_VERSION}, which a read-only open cannot do (open it once writable)`,
      );
    }
    const mode = oneOff(db, "PRAGMA journal_mode", (q) => q.value<[string]>()?.[0]) ?? "delete";
    db.exec("PRAGMA foreign_keys = ON");
    return {
      version,
      mode: mode === "wal" ? "wal" : "delete",
      reason: "read-only: as found on disk",
    };
  }
  const requested = options.journalMode ?? journalModeFromEnv() ?? DEFAULT_JOURNAL_MODE;
  const { mode, reason } = applyJournalMode(db, requested, fail, switching);
  // EXTRA in both modes: WAL commits cost the same as under FULL, and a connection whose
  // switch to WAL failed on an I/O error can journal in rollback mode while the header
  // says WAL, where only EXTRA syncs the folder after the journal's unlink (the commit).
  db.exec("PRAGMA synchronous = EXTRA");
  db.exec("PRAGMA foreign_keys = ON");
  return { version, mode, reason };
}

function migrate(connection: Connection): void {
  const db = connection.database();
  connection.write("migrate", () => {
    // Re-read inside the write lock: a concurrent opener may have migrated already.
    const version = currentVersion(db);
    if (version > STORE_SCHEMA_VERSION) {
      throw new SchemaVersionError(
        `Cannot open session database "${connection.path}": it has schema version ${version}, newer than ${STORE_SCHEMA_VERSION}`,
      );
    }
    for (let v = version; v < STORE_SCHEMA_VERSION; v++) db.exec(MIGRATIONS[v]!);
    if (version === 0) db.exec("INSERT INTO schema_version (version) VALUES (0)");
    db.exec(`UPDATE schema_version SET version = ${STORE_SCHEMA_VERSION}`);
  });
}

function createPrivateFile(path: string, fail: (detail: string) => Error): void {
  const dir = dirname(path);
  try {
    if (!Deno.statSync(dir).isDirectory) {
      throw fail(`"${dir}" is not a directory (choose a path inside an existing folder)`);
    }
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) {
      throw fail(`the folder "${dir}" does not exist (create it first)`);
    }
    if (error instanceof SessionDBError) throw error;
    // Without permission to stat the folder, let SQLite report what it can.
    return;
  }
  try {
    Deno.openSync(path, { createNew: true, write: true, mode: 0o600 }).close();
    Deno.chmodSync(path, 0o600);
    syncFolder(dir);
  } catch (error) {
    if (error instanceof Deno.errors.AlreadyExists) return;
    if (error instanceof Deno.errors.PermissionDenied) {
      throw fail(`the folder "${dir}" is not writable (choose a writable location)`);
    }
    // Other failures surface from SQLite's own open with its message.
  }
}

// A new file's name is durable only once its folder is synced: without this a power
// loss right after the first commit could lose the whole database file.
function syncFolder(dir: string): void {
  try {
    const folder = Deno.openSync(dir, { read: true });
    try {
      folder.syncSync();
    } finally {
      folder.close();
    }
  } catch {
    // Some platforms cannot open or sync a folder; SQLite's own journal syncs still hold.
  }
}

function currentVersion(db: Database): number {
  const table = oneOff(
    db,
    "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'",
    (q) => q.value(),
  );
  if (!table) return 0;
  return Number(
    oneOff(db, "SELECT max(version) FROM schema_version", (q) => q.value<[number]>()?.[0]) ?? 0,
  );
}

function applyJournalMode(
  db: Database,
  requested: JournalMode,
  fail: (detail: string) => Error,
  switching: (change: string) => void,
): { mode: JournalMode; reason: string } {
  const onDisk = String(
    oneOff(db, "PRAGMA journal_mode", (q) => q.value<[string]>()?.[0]) ?? "delete",
  )
    .toLowerCase();
  const decision = decideJournalMode(requested, sqliteVersion(), onDisk);
  if (onDisk !== decision.mode) {
    // A busy result goes up to the open's wait; otherwise SQLite answers the mode it kept.
    switching(`${decision.mode} was requested but SQLite kept ${onDisk}`);
    const result = oneOff(
      db,
      `PRAGMA journal_mode = ${decision.mode.toUpperCase()}`,
      (q) => String(q.value<[string]>()?.[0]).toLowerCase(),
    );
    if (result !== decision.mode) {
      throw fail(
        `journal mode ${decision.mode} was requested but SQLite kept ${result} (another connection may have the file open in WAL mode: close it and retry)`,
      );
    }
  }
  return { mode: decision.mode, reason: decision.reason };
}
