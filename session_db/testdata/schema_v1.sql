-- A session database as written by schema version 1 (before soft delete, branches
-- and the outbox), with a compression rotation in it: the migration fixture.
CREATE TABLE schema_version (version INTEGER NOT NULL);
INSERT INTO schema_version VALUES (1);
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
INSERT INTO sessions VALUES ('old-parent', 'cli', NULL, 1700000000, 1700000100, 'compression', 2, NULL, NULL);
INSERT INTO sessions VALUES ('old-child', 'cli', 'old-parent', 1700000100, NULL, NULL, 1, 'pending', 'telegram');
INSERT INTO messages (session_id, role, content, timestamp) VALUES ('old-parent', 'user', 'hello', 1700000001);
INSERT INTO messages (session_id, role, content, timestamp) VALUES ('old-parent', 'assistant', 'hi', 1700000002);
INSERT INTO messages (session_id, role, content, timestamp) VALUES ('old-child', 'system', 'summary', 1700000100);
