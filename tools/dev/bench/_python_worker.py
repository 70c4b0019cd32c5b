"""The Python `sqlite3` side of the bench, tools/bench/ (not meant to be run by hand).

Usage: python3 tools/bench/_python_worker.py '<job as JSON>'

Jobs (tools/bench/_jobs.ts, built by tools/bench/_children.ts, which also passes the
store's SQL and schema so that every implementation runs exactly the same statements):
  {"kind": "info"}
  {"kind": "append", "path", "mode", "sync", "n", "batch", "warmup", "content",
   "sessionId", "schema", "sql": {...}, "slices", "idleThreads"?, "jitWarmup"?}

After the warmup the child prints "ready", then runs as many appends as each stdin line
asks and prints their time, until "done" (tools/bench/_protocol.ts): the bench
interleaves it with the other implementations so that the disk's drift hits them all
alike. With n = 0 (a warm-up run) it returns after the warmup.

Prints one JSON line on stdout.
"""

import json
import os
import sqlite3
import sys
import tempfile
import threading
import time

SYNC_NAMES = {0: "OFF", 1: "NORMAL", 2: "FULL", 3: "EXTRA"}


def info():
    return {
        "python": sys.version.split()[0],
        "sqlite": sqlite3.sqlite_version,
    }


def append(job):
    # A diagnostic: idle threads, as a Deno process has, make every fd syscall pay for a
    # shared file table. They wait on an event that is never set (daemons die with us).
    idle = threading.Event()
    for _ in range(job.get("idleThreads", 0)):
        threading.Thread(target=idle.wait, daemon=True).start()
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
    seconds = cpu_seconds = 0.0
    if n > 0:
        # Interleaved with its peers by the bench: run what each stdin line asks.
        print("ready", flush=True)
        i = job["warmup"]
        for line in iter(sys.stdin.readline, ""):
            if line.strip() == "done":
                break
            count = int(line)
            if count <= 0:
                raise RuntimeError("bad slice request: %r" % line)
            cpu = time.process_time()
            started = time.perf_counter()
            for k in range(i, i + count):
                step(k)
            i += count
            s = time.perf_counter() - started
            seconds += s
            cpu_seconds += time.process_time() - cpu
            print(json.dumps({"seconds": s}), flush=True)
        if i != job["warmup"] + n:
            raise RuntimeError("ran %d of %d steps" % (i - job["warmup"], n))
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
        sys.exit("usage: _python_worker.py '<job as JSON>' (run by tools/bench/main.ts)")
    job = json.loads(sys.argv[1])
    if job["kind"] == "info":
        out = info()
    elif job["kind"] == "append":
        if job.get("jitWarmup"):
            # The same scratch warm-up as the Deno children get (jitWarmup in _jobs.ts).
            shm = "/dev/shm" if os.path.isdir("/dev/shm") else os.path.dirname(job["path"])
            with tempfile.TemporaryDirectory(dir=shm) as scratch:
                warm = dict(job, path=os.path.join(scratch, "warmup.db"), mode="wal",
                            sync="FULL", n=0, warmup=job["jitWarmup"], idleThreads=0)
                append(warm)
        out = append(job)
    else:
        sys.exit("unknown job kind %r" % job["kind"])
    print(json.dumps(out))


if __name__ == "__main__":
    main()
