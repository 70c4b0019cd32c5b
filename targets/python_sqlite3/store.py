"""The Python session store behind worker.py: sqlite3 from the standard library, one
BEGIN IMMEDIATE transaction per operation, committed before the worker answers."""

import hashlib
import json
import os
import random
import sqlite3
import threading
import time

WRITE_DEADLINE_S = 20.0
APPEND_DEADLINE_S = 60.0
BUSY_TIMEOUT_S = 1.0

SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
  id TEXT PRIMARY KEY,
  parent_session_id TEXT REFERENCES sessions(id),
  started_at REAL NOT NULL,
  ended_at REAL,
  end_reason TEXT,
  message_count INTEGER NOT NULL DEFAULT 0,
  handoff_state TEXT,
  handoff_platform TEXT,
  handoff_error TEXT,
  handoff_owner_pid INTEGER
);
CREATE TABLE IF NOT EXISTS messages (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  session_id TEXT NOT NULL REFERENCES sessions(id),
  role TEXT NOT NULL,
  content TEXT,
  active INTEGER NOT NULL DEFAULT 1,
  timestamp REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS idx_messages_session ON messages(session_id, id);
CREATE TABLE IF NOT EXISTS outbox (
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
"""

ROLES = ("system", "user", "assistant", "tool")
SESSION_COLUMNS = (
    "id, parent_session_id, started_at, ended_at, end_reason, message_count, "
    "handoff_state, handoff_platform, handoff_error"
)
OBLIGATION_COLUMNS = (
    "obligation_id, session_id, message_ref, content, state, attempts, delivery_fence, "
    "owner_pid, created_at, updated_at, last_error"
)



class StoreError(Exception):
    """An error the client raises by name (the protocol's typed errors)."""

    def __init__(self, name, message):
        super().__init__(message)
        self.name = name


def wal_reset_vulnerable(version):
    """SQLite 3.7.0 through 3.51.2 in WAL mode, but for the backports 3.44.6 and 3.50.7."""
    v = tuple(int(p) for p in version.split("."))
    safe = v < (3, 7, 0) or v >= (3, 51, 3) or (3, 50, 7) <= v < (3, 51, 0) or (
        (3, 44, 6) <= v < (3, 45, 0)
    )
    return not safe


def alive(pid):
    """Whether a process runs (a zombie, dead but not reaped, does not)."""
    if pid is None or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        # kill(id, 0) succeeds for the id of another process's thread too: no process.
        with open(f"/proc/{pid}/status", "rb") as f:
            for line in f:
                if line.startswith(b"Tgid:") and int(line.split()[1]) != pid:
                    return False
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
        return stat[stat.rindex(b")") + 2 : stat.rindex(b")") + 3] not in (b"Z", b"X")
    except OSError:
        return True


def obligation_id(session_id, message_ref, content):
    text = json.dumps([session_id, message_ref, content], separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def session_of(row):
    if row is None:
        return None
    return {
        "id": row[0],
        "parentSessionId": row[1],
        "startedAt": row[2],
        "endedAt": row[3],
        "endReason": row[4],
        "messageCount": row[5],
        "handoffState": row[6],
        "handoffPlatform": row[7],
        "handoffError": row[8],
    }


def obligation_of(row):
    if row is None:
        return None
    return {
        "obligationId": row[0],
        "sessionId": row[1],
        "messageRef": row[2],
        "content": row[3],
        "state": row[4],
        "attempts": row[5],
        "deliveryFence": row[6],
        "ownerPid": row[7],
        "createdAt": row[8],
        "updatedAt": row[9],
        "lastError": row[10],
    }


def busy(error):
    text = str(error).lower()
    return "locked" in text or "busy" in text


class Store:
    """The store: one connection, one transaction per operation."""

    # Set by the protocol loop for each request: answers it (an acknowledgement).
    ack = None

    def __init__(self, path, journal_mode):
        self.path = path
        self.pid = os.getpid()
        # Reentrant: a subclass's write may wrap this one; a thread may share the connection.
        self.lock = threading.RLock()
        if not os.path.exists(path):
            # New database files are private, and SQLite's journals follow the file's mode.
            os.close(os.open(path, os.O_CREAT | os.O_RDWR, 0o600))
        self.db = sqlite3.connect(
            path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
        )
        self.db.execute("PRAGMA foreign_keys = ON")
        self.journal_mode, self.journal_mode_reason = self.resolve_mode(journal_mode)
        sync = "FULL" if self.journal_mode == "wal" else "EXTRA"
        self.db.execute(f"PRAGMA synchronous = {sync}")
        # One statement at a time: executescript would COMMIT the open transaction first.
        self.write(
            lambda: [self.db.execute(sql) for sql in SCHEMA.split(";") if sql.strip()] and None
        )

    # --- journal mode -------------------------------------------------------------

    def on_disk_mode(self):
        return self.retry(lambda: self.db.execute("PRAGMA journal_mode").fetchone()[0].lower())

    def set_mode(self, mode):
        got = self.retry(lambda: self.db.execute(f"PRAGMA journal_mode = {mode}").fetchone()[0])
        return got.lower()

    def resolve_mode(self, wanted):
        """The leg's mode, unless this SQLite could corrupt a WAL file (then DELETE)."""
        version = sqlite3.sqlite_version
        current = self.on_disk_mode()
        if wanted == "delete":
            got = self.set_mode("delete")
            if got != "delete":
                raise StoreError("StoreOpenError", f"journal_mode stayed {got}, not delete")
            return "delete", "as requested"
        if wal_reset_vulnerable(version):
            if current == "wal":
                return "wal", f"the file is already WAL (SQLite {version} is WAL-reset-vulnerable)"
            self.set_mode("delete")
            return "delete", (
                f"SQLite {version} is WAL-reset-vulnerable (3.7.0 to 3.51.2): new files stay "
                "in DELETE mode"
            )
        got = self.set_mode("wal")
        if got != "wal":
            return got, f"journal_mode = WAL gave {got}"
        return "wal", "as requested" if wanted == "wal" else "the store's default"

    # --- transactions -------------------------------------------------------------

    def retry(self, fn, deadline_s=WRITE_DEADLINE_S, what="read"):
        start = time.monotonic()
        attempts = 0
        while True:
            attempts += 1
            try:
                return fn()
            except sqlite3.OperationalError as error:
                if not busy(error):
                    raise
                waited = time.monotonic() - start
                if waited >= deadline_s:
                    raise StoreError(
                        "BusyDeadlineError",
                        f"Cannot {what} on {self.path}: the database stayed locked for "
                        f"{round(waited * 1000)} ms ({attempts} attempts)",
                    ) from error
                jitter = random.uniform(0.02, 0.15) if waited < 2 else random.uniform(0.25, 1.0)
                time.sleep(min(jitter, max(0.001, deadline_s - waited)))

    def write(self, fn, deadline_s=WRITE_DEADLINE_S, ack=None):
        """Runs fn in one BEGIN IMMEDIATE transaction, retried while busy, and commits it;
        the caller answers after this returns (ack is the mutants' way to answer sooner)."""

        def attempt():
            self.db.execute("BEGIN IMMEDIATE")
            try:
                result = fn()
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
            self.commit(result, ack)
            return result

        with self.lock:
            return self.retry(attempt, deadline_s, "write")

    def commit(self, result, ack):
        try:
            self.db.execute("COMMIT")
        except sqlite3.OperationalError:
            self.db.execute("ROLLBACK")
            raise

    def read(self, fn):
        with self.lock:
            return self.retry(fn)

    def require_session(self, session_id):
        row = self.db.execute(
            "SELECT ended_at, end_reason FROM sessions WHERE id = ?", (session_id,)
        ).fetchone()
        if row is None:
            raise StoreError("SessionNotFoundError", f'Session "{session_id}" does not exist')
        return row

    # --- sessions and messages ----------------------------------------------------

    def createSession(self, session_id, *_):
        check_text(session_id, "session id")

        def insert():
            self.db.execute(
                "INSERT INTO sessions (id, started_at) VALUES (?, ?) ON CONFLICT(id) DO NOTHING",
                (session_id, time.time()),
            )

        self.write(insert, ack=self.ack)
        return self.getSession(session_id)

    def appendMessage(self, session_id, message):
        check_text(session_id, "session id")
        role = message.get("role") if isinstance(message, dict) else None
        content = message.get("content") if isinstance(message, dict) else None
        if role not in ROLES:
            raise StoreError("InvalidInputError", f"Invalid role {role!r}: use one of {ROLES}")
        if content is not None and not isinstance(content, str):
            raise StoreError("InvalidInputError", "Invalid content: use a string")
        return self.insert_message(session_id, role, content)

    def insert_message(self, session_id, role, content):
        def insert():
            ended_at, reason = self.require_session(session_id)
            if reason == "compression":
                raise StoreError(
                    "CompressionSessionClosedError",
                    f'Cannot append to session "{session_id}": it was rotated by compression',
                )
            cursor = self.db.execute(
                "INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, ?, ?, ?)",
                (session_id, role, content, time.time()),
            )
            self.db.execute(
                "UPDATE sessions SET message_count = message_count + 1 WHERE id = ?",
                (session_id,),
            )
            return cursor.lastrowid

        return self.write(insert, APPEND_DEADLINE_S, ack=self.ack)

    def getMessages(self, session_id, options=None):
        inactive = bool((options or {}).get("includeInactive"))
        sql = "SELECT id, role, content, active FROM messages WHERE session_id = ?"
        sql += "" if inactive else " AND active = 1"
        rows = self.read(lambda: self.db.execute(sql + " ORDER BY id", (session_id,)).fetchall())
        return [{"id": r[0], "role": r[1], "content": r[2], "active": bool(r[3])} for r in rows]

    def getSession(self, session_id):
        return self.read(
            lambda: session_of(
                self.db.execute(
                    f"SELECT {SESSION_COLUMNS} FROM sessions WHERE id = ?", (session_id,)
                ).fetchone()
            )
        )

    def listSessions(self):
        rows = self.read(
            lambda: self.db.execute(
                f"SELECT {SESSION_COLUMNS} FROM sessions ORDER BY started_at, id"
            ).fetchall()
        )
        return [session_of(r) for r in rows]

    def checkInvariants(self):
        checks = [
            ("integrity_check", "PRAGMA integrity_check", lambda rows: rows != [("ok",)]),
            ("foreign_key_check", "PRAGMA foreign_key_check", bool),
            (
                "message_count differs from active rows",
                "SELECT id FROM sessions s WHERE message_count != "
                "(SELECT count(*) FROM messages m WHERE m.session_id = s.id AND m.active = 1)",
                bool,
            ),
            (
                "invalid handoff state",
                "SELECT id FROM sessions WHERE handoff_state IS NOT NULL AND handoff_state "
                "NOT IN ('pending', 'running', 'completed', 'failed')",
                bool,
            ),
            (
                "invalid obligation state",
                "SELECT obligation_id FROM outbox WHERE state NOT IN "
                "('pending', 'attempting', 'delivered', 'failed', 'unknown') "
                "OR (state IN ('failed', 'unknown') AND last_error IS NULL) OR delivery_fence < 0",
                bool,
            ),
        ]
        problems = []
        for what, sql, bad in checks:
            rows = self.read(lambda sql=sql: self.db.execute(sql).fetchall())
            if bad(rows):
                problems.append(f"{what}: {', '.join(str(r[0]) for r in rows[:10])}")
        return problems

    # --- handoff ------------------------------------------------------------------

    def requestHandoff(self, session_id, platform):
        def request():
            self.require_session(session_id)
            return self.db.execute(
                "UPDATE sessions SET handoff_state = 'pending', handoff_platform = ?, "
                "handoff_error = NULL WHERE id = ? AND (handoff_state IS NULL OR "
                "handoff_state IN ('completed', 'failed'))",
                (platform, session_id),
            ).rowcount == 1

        return self.write(request, ack=self.ack)

    def claimHandoff(self, session_id):
        return self.write(
            lambda: self.db.execute(
                "UPDATE sessions SET handoff_state = 'running', handoff_owner_pid = ? "
                "WHERE id = ? AND handoff_state = 'pending'",
                (self.pid, session_id),
            ).rowcount
            == 1,
            ack=self.ack,
        )

    def getHandoffState(self, session_id):
        session = self.getSession(session_id)
        return session["handoffState"] if session else None

    def completeHandoff(self, session_id):
        def complete():
            if self.db.execute(
                "UPDATE sessions SET handoff_state = 'completed' "
                "WHERE id = ? AND handoff_state = 'running' AND handoff_owner_pid = ?",
                (session_id, self.pid),
            ).rowcount == 1:
                return True
            owner = self.db.execute(
                "SELECT handoff_owner_pid FROM sessions WHERE id = ? AND handoff_state = 'running'",
                (session_id,),
            ).fetchone()
            if owner is not None:
                raise StoreError(
                    "HandoffOwnershipError",
                    f'Cannot complete the handoff of session "{session_id}": process '
                    f"{owner[0]} holds its claim, not this one ({self.pid})",
                )
            return False

        return self.write(complete, ack=self.ack)

    def failHandoff(self, session_id, error):
        return self.write(
            lambda: self.db.execute(
                "UPDATE sessions SET handoff_state = 'failed', handoff_error = ? "
                "WHERE id = ? AND handoff_state IN ('pending', 'running')",
                (error, session_id),
            ).rowcount
            == 1,
            ack=self.ack,
        )

    # --- the delivery outbox ------------------------------------------------------

    def getObligation(self, oid):
        return self.read(
            lambda: obligation_of(
                self.db.execute(
                    f"SELECT {OBLIGATION_COLUMNS} FROM outbox WHERE obligation_id = ?", (oid,)
                ).fetchone()
            )
        )

    def listObligations(self, *_):
        rows = self.read(
            lambda: self.db.execute(
                f"SELECT {OBLIGATION_COLUMNS} FROM outbox ORDER BY created_at, obligation_id"
            ).fetchall()
        )
        return [obligation_of(r) for r in rows]

    def recordObligation(self, obligation):
        session_id = obligation["sessionId"]
        oid = obligation_id(session_id, obligation["messageRef"], obligation["content"])

        def record():
            self.require_session(session_id)
            now = time.time()
            self.db.execute(
                "INSERT OR IGNORE INTO outbox (obligation_id, session_id, message_ref, content, "
                "state, owner_pid, created_at, updated_at) VALUES (?, ?, ?, ?, 'pending', ?, ?, ?)",
                (oid, session_id, obligation["messageRef"], obligation["content"], self.pid, now, now),
            )

        self.write(record, ack=self.ack)
        return self.getObligation(oid)

    def markAttempting(self, oid, expected_fence):
        def attempt():
            changed = self.db.execute(
                "UPDATE outbox SET state = 'attempting', attempts = attempts + 1, "
                "delivery_fence = delivery_fence + 1, owner_pid = ?, updated_at = ? "
                "WHERE obligation_id = ? AND state = 'pending' AND delivery_fence = ?",
                (self.pid, time.time(), oid, expected_fence),
            ).rowcount
            return expected_fence + 1 if changed == 1 else None

        return self.write(attempt, ack=self.ack)

    def markDelivered(self, oid, fence):
        return self.write(
            lambda: self.db.execute(
                "UPDATE outbox SET state = 'delivered', updated_at = ?, last_error = NULL "
                "WHERE obligation_id = ? AND state = 'attempting' AND delivery_fence = ?",
                (time.time(), oid, fence),
            ).rowcount
            == 1,
            ack=self.ack,
        )

    def terminal(self, state, oid, fence, reason):
        return self.write(
            lambda: self.db.execute(
                "UPDATE outbox SET state = ?, last_error = ?, updated_at = ? WHERE "
                "obligation_id = ? AND state IN ('pending', 'attempting') AND delivery_fence = ?",
                (state, reason, time.time(), oid, fence),
            ).rowcount
            == 1,
            ack=self.ack,
        )

    def markFailed(self, oid, fence, reason):
        return self.terminal("failed", oid, fence, reason)

    def markUnknown(self, oid, fence, reason):
        return self.terminal("unknown", oid, fence, reason)

    def sweepRecoverable(self, options=None):
        idempotent = bool((options or {}).get("idempotentTransport"))

        def sweep():
            rows = self.db.execute(
                "SELECT obligation_id, state, delivery_fence, owner_pid FROM outbox "
                "WHERE state IN ('pending', 'attempting') ORDER BY created_at, obligation_id"
            ).fetchall()
            taken = []
            now = time.time()
            for oid, state, fence, owner in rows:
                if owner == self.pid or alive(owner):
                    continue
                if state == "pending":
                    self.db.execute(
                        "UPDATE outbox SET owner_pid = ?, updated_at = ? "
                        "WHERE obligation_id = ? AND state = 'pending' AND delivery_fence = ?",
                        (self.pid, now, oid, fence),
                    )
                    taken.append((oid, "send"))
                elif idempotent:
                    self.db.execute(
                        "UPDATE outbox SET owner_pid = ?, updated_at = ?, attempts = attempts + 1, "
                        "delivery_fence = delivery_fence + 1 "
                        "WHERE obligation_id = ? AND state = 'attempting' AND delivery_fence = ?",
                        (self.pid, now, oid, fence),
                    )
                    taken.append((oid, "resend"))
                else:
                    self.db.execute(
                        "UPDATE outbox SET state = 'unknown', owner_pid = ?, updated_at = ?, "
                        "last_error = ? WHERE obligation_id = ? AND state = 'attempting' "
                        "AND delivery_fence = ?",
                        (
                            self.pid,
                            now,
                            f"owner pid {owner} died after marking it attempting; it may have "
                            "been sent and the transport has no idempotency key",
                            oid,
                            fence,
                        ),
                    )
                    taken.append((oid, "unknown"))
            return taken

        taken = self.write(sweep, ack=self.ack)
        return [
            {"obligation": self.getObligation(oid), "action": action, "idempotencyKey": oid}
            for oid, action in taken
        ]

    # --- ending -------------------------------------------------------------------

    def close(self):
        self.db.close()
        return None


def check_text(value, what):
    if not isinstance(value, str) or not value:
        raise StoreError("InvalidInputError", f"Invalid {what} {value!r}: use a non-empty string")


# The store methods the worker serves (docs/worker_protocol.md), named as in cells/contract/target.ts.
METHODS = [
    "createSession",
    "appendMessage",
    "getMessages",
    "getSession",
    "listSessions",
    "checkInvariants",
    "requestHandoff",
    "claimHandoff",
    "getHandoffState",
    "completeHandoff",
    "failHandoff",
    "recordObligation",
    "markAttempting",
    "markDelivered",
    "markFailed",
    "markUnknown",
    "sweepRecoverable",
    "listObligations",
    "getObligation",
]
