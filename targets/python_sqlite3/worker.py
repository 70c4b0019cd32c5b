#!/usr/bin/env python3
"""A session store in Python, on the standard library's sqlite3 only, driven over the
line protocol of docs/worker_protocol.md: one JSON request per line on stdin, one JSON
answer per line on stdout, an acknowledgement only after COMMIT returned.

    python3 worker.py [--sqlite-library PATH] [--mutant NAME]

--sqlite-library: the SQLite the leg runs on. sqlite3 loads the system library at start,
so the worker starts itself again with the library preloaded (the same process: exec).
--mutant: a deliberately broken store, for the suite's mutants (mutants.py).
"""

import hashlib
import json
import os
import sqlite3
import sys
import tempfile

# Isolated mode (-I) leaves the script's folder off sys.path: the store lives there. No
# bytecode cache is written next to it (a write outside the store's folder, in a cell).
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from mutants import MUTANTS  # noqa: E402
from store import METHODS, Store, StoreError  # noqa: E402


def reply(message):
    sys.stdout.write(json.dumps(message, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def serve(mutant):
    store = None
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        rid = request.get("id")
        op = request.get("op")
        args = request.get("args") or []
        answered = []

        def ack(result, rid=rid):
            answered.append(True)
            reply({"id": rid, "ok": True, "result": result})

        try:
            if op == "open":
                if store is not None:
                    raise StoreError("ProtocolError", "open twice")
                store = (MUTANTS[mutant] if mutant else Store)(
                    args[0], args[1] if len(args) > 1 else None
                )
                result = {
                    "methods": METHODS,
                    "journalMode": store.journal_mode,
                    "journalModeReason": store.journal_mode_reason,
                    "sqliteVersion": sqlite3.sqlite_version,
                    "pid": os.getpid(),
                }
            elif store is None:
                raise StoreError("ProtocolError", f"{op} before open")
            elif op == "close":
                result = store.close()
                reply({"id": rid, "ok": True, "result": result})
                return
            elif op in METHODS:
                store.ack = ack
                result = getattr(store, op)(*args)
            else:
                raise StoreError("ProtocolError", f"unknown op {op!r}")
            if not answered:
                reply({"id": rid, "ok": True, "result": result})
        except StoreError as error:
            reply({"id": rid, "ok": False, "error": {"name": error.name, "message": str(error)}})
        except Exception as error:  # anything else is the store's own failure, by name
            name = type(error).__name__
            reply({"id": rid, "ok": False, "error": {"name": name, "message": str(error)}})
    # End of input: the client is gone. Nothing more is written, except by a mutant.
    if store is not None and hasattr(store, "end_of_input"):
        store.end_of_input()


def preloadable(path):
    """The library's path, or a link to it that LD_PRELOAD can name: the loader splits its
    list at spaces and colons, so a library under such a folder would never load."""
    separators = " :\t\n"
    if not any(c in path for c in separators):
        return path
    target = os.path.realpath(path)
    folder = tempfile.gettempdir()
    digest = hashlib.sha256(target.encode()).hexdigest()[:16]
    link = os.path.join(folder, f"session-cells-sqlite-{digest}.so")
    if any(c in link for c in separators):
        sys.exit(
            f"worker.py: cannot preload {path!r}: LD_PRELOAD splits paths at spaces and colons, "
            f"and the temporary folder {folder!r} holds one too (set TMPDIR to a folder without them)"
        )
    if os.path.realpath(link) != target:
        partial = f"{link}.{os.getpid()}.tmp"
        os.symlink(target, partial)
        os.replace(partial, link)
    return link


def main():
    args = sys.argv[1:]
    library = None
    mutant = None
    while args:
        flag = args.pop(0)
        if flag == "--sqlite-library" and args:
            library = args.pop(0)
        elif flag == "--mutant" and args:
            mutant = args.pop(0)
            if mutant not in MUTANTS:
                sys.exit(f"worker.py: unknown mutant {mutant!r}: use one of {sorted(MUTANTS)}")
        else:
            sys.exit("usage: worker.py [--sqlite-library PATH] [--mutant NAME]")
    preload = os.environ.get("LD_PRELOAD", "")
    if library:
        library = preloadable(library)
    if library and library not in preload.split():
        # sqlite3 binds the library it was linked against at start: exec again with the
        # leg's library preloaded (same pid, same process tree).
        env = dict(os.environ, LD_PRELOAD=f"{library} {preload}".strip())
        flags = ["-I"] if sys.flags.isolated else []
        os.execve(sys.executable, [sys.executable, *flags, *sys.argv], env)
    serve(mutant)


if __name__ == "__main__":
    main()
