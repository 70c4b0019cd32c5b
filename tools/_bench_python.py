"""The Python `sqlite3` side of tools/bench.ts (not meant to be run by hand).

Usage: python3 tools/_bench_python.py '<job as JSON>'

Jobs (built by tools/bench.ts, which also passes the store's SQL and schema so that
every implementation runs exactly the same statements):
  {"kind": "info"}
  {"kind": "append", "path", "mode", "sync", "n", "batch", "warmup", "content",
   "sessionId", "schema", "sql": {...}}

Prints one JSON line on stdout.
"""

import json
import sqlite3
import sys
import time

SYNC_NAMES = {0: "OFF", 1: "NORMAL", 2: "FULL", 3: "EXTRA"}


def info():
    return {
        "python": sys.version.split()[0],
        "sqlite": sqlite3.sqlite_version,
    }


def append(job):
    sql = job["sql"]
    sid = job["sessionId"]
    content = job["content"]
    batch = job["batch"]
    # Autocommit mode: the statements below are the whole transaction protocol.
    conn = sqlite3.connect(job["path"], isolation_level=None, timeout=1.0)
    cur = conn.cursor()
    cur.execute("PRAGMA busy_timeout = 1000")
    journal = cur.execute("PRAGMA journal_mode = %s" % job["mode"].upper()).fetchone()[0]
    cur.execute("PRAGMA synchronous = %s" % job["sync"])
    cur.execute("PRAGMA foreign_keys = ON")
    synchronous = SYNC_NAMES.get(cur.execute("PRAGMA synchronous").fetchone()[0], "?")
    conn.executescript(job["schema"])
    cur.execute(sql["begin"])
    cur.execute(sql["createSession"], (sid, "cli", time.time(), None))
    cur.execute(sql["commit"])

    # appendMessage checks the session with one column, appendMessages with all of them.
    select_session = sql["selectAppendable"] if batch == 1 else sql["selectSession"]
    insert_message = sql["insertMessage"]
    update_one = sql["updateOne"]
    update_many = sql["updateMany"]
    begin = sql["begin"]
    commit = sql["commit"]

    def one(i):
        cur.execute(begin)
        try:
            if cur.execute(select_session, (sid,)).fetchone() is None:
                raise RuntimeError("session missing")
            cur.execute(
                insert_message,
                (sid, "user", content + str(i), None, None, None, time.time()),
            )
            row_id = cur.lastrowid
            cur.execute(update_one, (sid,))
            cur.execute(commit)
        except BaseException:
            if conn.in_transaction:
                cur.execute("ROLLBACK")
            raise
        return row_id

    def many(i):
        cur.execute(begin)
        try:
            if cur.execute(select_session, (sid,)).fetchone() is None:
                raise RuntimeError("session missing")
            ids = []
            base = i * batch
            for k in range(batch):
                cur.execute(
                    insert_message,
                    (sid, "user", content + str(base + k), None, None, None, time.time()),
                )
                ids.append(cur.lastrowid)
            cur.execute(update_many, (len(ids), sid))
            cur.execute(commit)
        except BaseException:
            if conn.in_transaction:
                cur.execute("ROLLBACK")
            raise
        return ids

    step = one if batch == 1 else many
    for i in range(job["warmup"]):
        step(i)
    n = job["n"]
    cpu = time.process_time()
    started = time.perf_counter()
    for i in range(job["warmup"], job["warmup"] + n):
        step(i)
    seconds = time.perf_counter() - started
    cpu_seconds = time.process_time() - cpu
    count = cur.execute("SELECT message_count FROM sessions WHERE id = ?", (sid,)).fetchone()[0]
    expected = (job["warmup"] + n) * batch
    if count != expected:
        raise RuntimeError("message_count %d, expected %d" % (count, expected))
    conn.close()
    return {
        "seconds": seconds,
        "cpuSeconds": cpu_seconds,
        "transactions": n,
        "messages": n * batch,
        "sqlite": sqlite3.sqlite_version,
        "journalMode": journal.lower(),
        "synchronous": synchronous,
    }


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: _bench_python.py '<job as JSON>' (run by tools/bench.ts)")
    job = json.loads(sys.argv[1])
    if job["kind"] == "info":
        out = info()
    elif job["kind"] == "append":
        out = append(job)
    else:
        sys.exit("unknown job kind %r" % job["kind"])
    print(json.dumps(out))


if __name__ == "__main__":
    main()
