"""Holds a database file's write lock for a while, from a process of its own.

Usage: hold_write_lock.py <db path> <journal mode> <ready path> <hold ms>

Creates the file in the journal mode, begins a write transaction, writes, creates the
ready file, holds the lock for the given time, commits and closes (a WAL file's last
connection closing is what lets another one leave WAL).
"""

import sqlite3
import sys
import time

path, mode, ready, hold_ms = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
db = sqlite3.connect(path, isolation_level=None)
got = db.execute(f"PRAGMA journal_mode = {mode}").fetchone()[0].lower()
if got != mode:
    sys.exit(f"journal mode {mode} was requested but SQLite kept {got}")
db.execute("CREATE TABLE held (x)")
db.execute("BEGIN IMMEDIATE")
db.execute("INSERT INTO held VALUES (1)")
open(ready, "w").close()
time.sleep(hold_ms / 1000)
db.execute("COMMIT")
db.close()
