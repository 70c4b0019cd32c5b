// The append body of a Deno child: one implementation (SessionDB, the bare binding or
// node:sqlite) appends in the slices the parent asks for (`_protocol.ts`). The replicas
// run the store's statements, pragmas and schema, passed in the job.
import { DatabaseSync } from "node:sqlite";
import { dirname, join } from "node:path";
import { Database, sqliteVersion } from "../../../session_db/sqlite/database.ts";
import { SessionDB } from "../../../session_db/session_db.ts";
import { isWalResetVulnerable } from "../../../session_db/journal_mode.ts";
import type { AppendJob, AppendResult } from "./_jobs.ts";
import { timed, type TimedRun } from "./_protocol.ts";
import { isDir } from "./_machine.ts";

function now(): number {
  return Date.now() / 1000;
}

function appendSessionDB(job: AppendJob): AppendResult {
  let note: string | undefined;
  if (job.mode === "wal" && isWalResetVulnerable(sqliteVersion())) {
    // The store keeps a new file in DELETE on a WAL-reset-vulnerable SQLite, but honours
    // a file already in WAL: put the empty file in WAL with the same library first.
    const pre = new Database(job.path);
    pre.exec("PRAGMA journal_mode = WAL");
    pre.close();
    note = `file pre-set to WAL (SQLite ${sqliteVersion()} is behind the WAL-reset gate)`;
  }
  const store = SessionDB.open(job.path, { journalMode: job.mode });
  try {
    if (store.journalMode !== job.mode) {
      throw new Error(
        `SessionDB opened in ${store.journalMode}, not ${job.mode}: ${store.journalModeReason}`,
      );
    }
    // SessionDB uses EXTRA, which in WAL mode commits exactly as FULL does.
    const same = job.mode === "wal" ? ["FULL", "EXTRA"] : ["EXTRA"];
    if (!same.includes(job.sync)) {
      throw new Error("SessionDB has no synchronous option (it uses EXTRA)");
    }
    store.createSession(job.sessionId);
    const sid = job.sessionId;
    const batch = job.batch;
    const run = batch === 1
      ? timed(job.warmup, job.n, (i) => {
        store.appendMessage(sid, { role: "user", content: job.content + i });
      })
      : timed(job.warmup, job.n, (i) => {
        const messages = [];
        for (let k = 0; k < batch; k++) {
          messages.push({ role: "user" as const, content: job.content + (i * batch + k) });
        }
        store.appendMessages(sid, messages);
      });
    const count = store.getSession(sid)?.messageCount;
    if (count !== (job.warmup + job.n) * batch) throw new Error(`message_count ${count}`);
    return {
      seconds: run.seconds,
      cpuSeconds: run.cpuSeconds,
      transactions: job.n,
      messages: job.n * batch,
      sqlite: store.sqliteVersion,
      journalMode: store.journalMode,
      synchronous: "EXTRA",
      ...(note ? { note } : {}),
    };
  } finally {
    store.close();
  }
}

/**
 * What a replica's set-up and read-back call, met by the binding's `Database` and
 * node:sqlite's `DatabaseSync` alike (the timed steps call each one's own API).
 */
interface Replica {
  exec(sql: string): unknown;
  prepare(sql: string): {
    run(...values: (string | number | null)[]): unknown;
    get(...values: string[]): unknown;
  };
}

/** The store's pragmas, schema and session on a replica's connection. */
function setUp(db: Replica, job: AppendJob): void {
  db.exec("PRAGMA busy_timeout = 1000");
  db.exec(`PRAGMA journal_mode = ${job.mode.toUpperCase()}`);
  db.exec(`PRAGMA synchronous = ${job.sync}`);
  db.exec("PRAGMA foreign_keys = ON");
  db.exec(job.schema);
  db.exec(job.sql.begin);
  db.prepare(job.sql.createSession).run(job.sessionId, "cli", now(), null);
  db.exec(job.sql.commit);
}

/** The store's append statements, prepared on a replica's connection. */
function statements<S>(prepare: (sql: string) => S, job: AppendJob): Statements<S> {
  const sql = job.sql;
  return {
    select: prepare(job.batch === 1 ? sql.selectAppendable : sql.selectSession),
    insert: prepare(sql.insertMessage),
    updateOne: prepare(sql.updateOne),
    updateMany: prepare(sql.updateMany),
  };
}

const SYNC_NAMES = ["OFF", "NORMAL", "FULL", "EXTRA"];

/** A replica's result, read back from its file: the count checked, the settings it ran. */
function replicaResult(db: Replica, job: AppendJob, run: TimedRun): AppendResult {
  const row = db.prepare(
    "SELECT message_count AS c, sqlite_version() AS v FROM sessions WHERE id = ?",
  ).get(job.sessionId) as { c: number; v: string } | undefined;
  if (row?.c !== (job.warmup + job.n) * job.batch) throw new Error(`message_count ${row?.c}`);
  const journal = db.prepare("PRAGMA journal_mode").get() as { journal_mode: string };
  const sync = db.prepare("PRAGMA synchronous").get() as { synchronous: number };
  return {
    seconds: run.seconds,
    cpuSeconds: run.cpuSeconds,
    transactions: job.n,
    messages: job.n * job.batch,
    sqlite: row.v,
    journalMode: journal.journal_mode,
    synchronous: SYNC_NAMES[Number(sync.synchronous)] ?? "?",
  };
}

/** A replica's statements, as one connection's API prepares them. */
type Statements<S> = { select: S; insert: S; updateOne: S; updateMany: S };

/**
 * A replica's run: the store's set-up on `db`, then the timed steps `stepOf` builds on
 * the prepared statements (each API's own calls: they are what is measured), then the
 * result read back; `db` is closed in the end.
 */
function replica<S>(
  db: { prepare(sql: string): S; close(): void } & Replica,
  job: AppendJob,
  stepOf: (statements: Statements<S>) => (i: number) => void,
): AppendResult {
  try {
    setUp(db, job);
    const step = stepOf(statements((sql) => db.prepare(sql), job));
    return replicaResult(db, job, timed(job.warmup, job.n, step));
  } finally {
    db.close();
  }
}

function appendBinding(job: AppendJob): AppendResult {
  const db = new Database(job.path);
  const { sql, sessionId: sid, batch } = job;
  return replica(db, job, ({ select, insert, updateOne, updateMany }) => (i: number) => {
    db.exec(sql.begin);
    try {
      if (!select.get(sid)) throw new Error("session missing");
      if (batch === 1) {
        insert.run(sid, "user", job.content + i, null, null, null, now());
        Number(db.lastInsertRowId);
        updateOne.run(sid);
      } else {
        const ids: number[] = [];
        for (let k = 0; k < batch; k++) {
          insert.run(sid, "user", job.content + (i * batch + k), null, null, null, now());
          ids.push(Number(db.lastInsertRowId));
        }
        updateMany.run(ids.length, sid);
      }
      db.exec(sql.commit);
    } catch (error) {
      if (db.inTransaction) db.exec("ROLLBACK");
      throw error;
    }
  });
}

function appendNode(job: AppendJob): AppendResult {
  const db = new DatabaseSync(job.path);
  const { sql, sessionId: sid, batch } = job;
  return replica(db, job, ({ select, insert, updateOne, updateMany }) => (i: number) => {
    db.exec(sql.begin);
    try {
      if (!select.get(sid)) throw new Error("session missing");
      if (batch === 1) {
        Number(insert.run(sid, "user", job.content + i, null, null, null, now()).lastInsertRowid);
        updateOne.run(sid);
      } else {
        const ids: number[] = [];
        for (let k = 0; k < batch; k++) {
          const r = insert.run(sid, "user", job.content + (i * batch + k), null, null, null, now());
          ids.push(Number(r.lastInsertRowid));
        }
        updateMany.run(ids.length, sid);
      }
      db.exec(sql.commit);
    } catch (error) {
      try {
        db.exec("ROLLBACK");
      } catch {
        // no transaction left to roll back
      }
      throw error;
    }
  });
}

function appendWith(job: AppendJob): AppendResult {
  switch (job.impl) {
    case "sessiondb":
      return appendSessionDB(job);
    case "binding":
      return appendBinding(job);
    case "node":
      return appendNode(job);
    default:
      throw new Error(`No Deno worker for "${job.impl}": run it with _python_worker.py`);
  }
}

/** Runs an append job, after its scratch warm-up (`AppendJob.jitWarmup`) when it has one. */
export function runAppends(job: AppendJob): AppendResult {
  if (job.jitWarmup) {
    // Steady state, as in a long-running agent: V8 moves the append path to its top
    // tier only after a few thousand calls, so they run first on a scratch file.
    const dir = Deno.makeTempDirSync({
      dir: isDir("/dev/shm") ? "/dev/shm" : dirname(job.path),
    });
    try {
      const { jitWarmup, ...rest } = job;
      appendWith({
        ...rest,
        path: join(dir, "warmup.db"),
        mode: "wal",
        sync: "FULL",
        n: 0,
        warmup: jitWarmup,
      });
    } finally {
      Deno.removeSync(dir, { recursive: true });
    }
  }
  return appendWith(job);
}
