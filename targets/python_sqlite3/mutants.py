"""Deliberately broken stores, each caught by the cells (cells/testdata/mutants/)."""

import threading
import time

from store import WRITE_DEADLINE_S, Store


class AckBeforeCommitStore(Store):
    """Answers a write before its COMMIT, which waits for the next write (or close)."""

    pending = False

    def write(self, fn, deadline_s=WRITE_DEADLINE_S, ack=None):
        with self.lock:
            if self.pending:
                self.retry(lambda: self.db.execute("COMMIT"), deadline_s, "write")
                self.pending = False
            return super().write(fn, deadline_s, ack)

    def commit(self, result, ack):
        if ack is None:
            return super().commit(result, ack)
        ack(result)  # acknowledged, not committed
        self.pending = True
        return None

    def close(self):
        if self.pending:
            self.db.execute("COMMIT")
        return super().close()


class QueuedStore(Store):
    """Answers an append once queued; a thread commits whatever is queued, one transaction
    after another, and on end of input (its client died) the rest is still committed."""

    def __init__(self, path, journal_mode):
        super().__init__(path, journal_mode)
        self.queue = []
        self.queued = threading.Condition()
        self.next_id = None
        self.stopping = False
        self.drainer = threading.Thread(target=self.drain, daemon=True)
        self.drainer.start()

    def insert_message(self, session_id, role, content):
        if self.next_id is None:
            self.next_id = self.read(
                lambda: self.db.execute(
                    "SELECT coalesce(max(seq), 0) FROM sqlite_sequence WHERE name = 'messages'"
                ).fetchone()[0]
            ) + 1
        with self.queued:
            self.queue.append((session_id, role, content))
            self.queued.notify()
        self.next_id += 1
        return self.next_id - 1

    def flush(self):
        with self.queued:
            while not self.queue and not self.stopping:
                self.queued.wait()
            batch, self.queue = self.queue, []
        if not batch:
            return

        def commit():
            for session_id, role, content in batch:
                self.db.execute(
                    "INSERT INTO messages (session_id, role, content, timestamp) "
                    "VALUES (?, ?, ?, ?)",
                    (session_id, role, content, time.time()),
                )
                self.db.execute(
                    "UPDATE sessions SET message_count = message_count + 1 WHERE id = ?",
                    (session_id,),
                )

        self.write(commit)

    def drain(self):
        while not self.stopping:
            self.flush()

    def close(self):
        with self.queued:
            self.stopping = True
            self.queued.notify()
        self.drainer.join()
        self.flush()
        return super().close()

    def end_of_input(self):
        self.close()


MUTANTS = {
    "ack-before-commit": AckBeforeCommitStore,
    "writes-after-parent-died": QueuedStore,
}
