// The schema as forward migrations: MIGRATIONS[i] moves a file from version i to i + 1.
// A new file runs them all; an older file runs the missing ones in one transaction.

/**
 * The schema version this store writes.
 *
 * @example
 * ```ts
 * import { STORE_SCHEMA_VERSION } from "./schema.ts";
 * import { SessionDB } from "./session_db.ts";
 * import { Database } from "./sqlite/database.ts";
 * const path = `${Deno.makeTempDirSync()}/s.db`;
 * SessionDB.open(path).close();
 * const db = new Database(path, { readonly: true });
 * const [version] = db.prepare("SELECT version FROM schema_version").value() ?? [];
 * console.log(version === STORE_SCHEMA_VERSION); // true
 * db.close();
 * ```
 */
export const STORE_SCHEMA_VERSION = 3;

export const MIGRATIONS: readonly string[] = [
  // 0 -> 1: sessions, messages, compression locks.
  `
  CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL);
  CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    source TEXT NOT NULL DEFAULT 'cli',
    parent_session_id TEXT REFERENCES sessions(id),
    started_at REAL NOT NULL,
    ended_at REAL,
    end_reason TEXT,
    message_count INTEGER NOT NULL DEFAULT 0,
    handoff_state TEXT,
    handoff_platform TEXT
  );
  CREATE TABLE messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL REFERENCES sessions(id),
    role TEXT NOT NULL,
    content TEXT,
    tool_call_id TEXT,
    tool_calls TEXT,
    tool_name TEXT,
    timestamp REAL NOT NULL
  );
  CREATE INDEX idx_messages_session ON messages(session_id, id);
  CREATE TABLE compression_locks (
    session_id TEXT PRIMARY KEY REFERENCES sessions(id),
    holder TEXT NOT NULL,
    acquired_at REAL NOT NULL,
    expires_at REAL NOT NULL
  );
  `,
  // 1 -> 2: soft delete and rewind, branch kinds, handoff errors, titles, the outbox.
  `
  ALTER TABLE sessions ADD COLUMN handoff_error TEXT;
  ALTER TABLE sessions ADD COLUMN rewind_count INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE sessions ADD COLUMN title TEXT;
  ALTER TABLE sessions ADD COLUMN branch_kind TEXT;
  ALTER TABLE messages ADD COLUMN active INTEGER NOT NULL DEFAULT 1;
  UPDATE sessions SET branch_kind = 'continuation'
    WHERE parent_session_id IN (SELECT id FROM sessions WHERE end_reason = 'compression');
  CREATE INDEX idx_messages_active ON messages(session_id, active, id);
  CREATE INDEX idx_sessions_parent ON sessions(parent_session_id);
  CREATE TABLE outbox (
    obligation_id TEXT PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions(id),
    message_ref TEXT NOT NULL,
    content TEXT NOT NULL,
    state TEXT NOT NULL DEFAULT 'pending',
    attempts INTEGER NOT NULL DEFAULT 0,
    delivery_fence INTEGER NOT NULL DEFAULT 0,
    owner_pid INTEGER,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    last_error TEXT
  );
  CREATE INDEX idx_outbox_state ON outbox(state);
  CREATE TABLE state_meta (key TEXT PRIMARY KEY, value TEXT);
  `,
  // 2 -> 3: the claimant of a running handoff, so that only it may complete the handoff.
  `
  ALTER TABLE sessions ADD COLUMN handoff_owner_pid INTEGER;
  `,
];
