/**
 * Performance bench of the FFI SQLite binding and of `SessionDB`, against
 * `node:sqlite` (Deno's built-in, on its bundled SQLite) and Python's `sqlite3`.
 *
 * 1. Durable appends, one transaction per append, per journal mode and synchronous
 *    policy: `SessionDB` vs Python `sqlite3` on the same library vs `node:sqlite`, all
 *    running the store's statements and pragmas, beside the disk's fsync rate (the
 *    physical bound of a one-sync commit).
 * 2. Statement rates: the binding vs `node:sqlite`, same SQL (prepared INSERT of
 *    100k rows in one transaction, point SELECT by rowid, 100-row SELECT).
 * 3. Batch appends (100 messages per `appendMessages` transaction).
 * 4. Wall time of `deno test -A` and `deno task matrix` (skipped by `--no-suite`), crash
 *    states per second of a short sweep and a short power-loss run, and the peak RSS
 *    (`VmHWM`) of cell 1's writer child.
 *
 * Every measurement runs in a child process (this file with `--worker`, or
 * `tools/_bench_python.py`), so that one process never opens a database file with
 * two different SQLite copies. In a round of appends every implementation's child runs
 * at once and they take turns in slices (the `ready` / count / `done` protocol of
 * `timed`); the median over rounds is reported, ratios pair by pair.
 *
 * Usage: `deno task bench [--quick] [--no-suite] [--json <path>]`. Writes `.cache/bench/bench.json`
 * unless `--json` names another path.
 *
 * @module
 */

import { DatabaseSync } from "node:sqlite";
import { cpuUsage } from "node:process";
import { fileURLToPath } from "node:url";
import { dirname, join, resolve } from "node:path";
import { Database, sqliteLibraryPath, sqliteVersion } from "../session_db/sqlite/database.ts";
import { SessionDB } from "../session_db/session_db.ts";
import { MIGRATIONS, SCHEMA_VERSION } from "../session_db/schema.ts";
import { isWalResetVulnerable } from "../session_db/journal_mode.ts";
import { fixedSqlitePath } from "./build_sqlite.ts";

// --- configuration -----------------------------------------------------------------

const THIS_FILE = fileURLToPath(import.meta.url);
const ROOT = resolve(dirname(THIS_FILE), "..");
const PYTHON_SCRIPT = join(ROOT, "tools", "_bench_python.py");
const BENCH_DIR = join(ROOT, ".cache", "bench");
const DEFAULT_JSON = join(BENCH_DIR, "bench.json");

type Mode = "wal" | "delete";
type Sync = "EXTRA" | "FULL" | "NORMAL";
type Impl = "sessiondb" | "binding" | "python" | "node";

interface Config {
  /** Rounds per measurement; the median is reported. */
  rounds: number;
  /** Slices per round: the implementations of a round take turns this many times. */
  slices: number;
  stmtRows: number;
  stmtPoints: number;
  stmtRanges: number;
  /** Appends per run, one transaction each, by `mode/sync`. */
  appends: Record<string, number>;
  /** Untimed appends first on the measured file (same count for every implementation). */
  warmup: number;
  /** Appends, then 100-message batches, first run on a scratch file (see `jitWarmup`). */
  jitWarmup: number;
  jitWarmupBatches: number;
  /** Batches per run, by mode. */
  batches: Record<Mode, number>;
  batchWarmup: number;
  batchSize: number;
  /** The CPU-only runs on tmpfs: appends (by mode) and batches per run. */
  tmpfsAppends: Record<Mode, number>;
  tmpfsBatches: number;
  fsyncMs: number;
}

const FULL_CONFIG: Config = {
  // Five short rounds rather than three long ones: the disk's rate drifts with other
  // load, and the ratios are taken round by round.
  rounds: 5,
  slices: 10,
  stmtRows: 100_000,
  stmtPoints: 100_000,
  stmtRanges: 2_000,
  appends: { "delete/EXTRA": 1000, "wal/FULL": 2000, "wal/NORMAL": 4000, "delete/FULL": 1000 },
  warmup: 200,
  // V8 moves the append path to TurboFan after about 4,500 appends (--trace-opt).
  jitWarmup: 6000,
  jitWarmupBatches: 60,
  batches: { delete: 200, wal: 300 },
  batchWarmup: 10,
  batchSize: 100,
  tmpfsAppends: { delete: 5000, wal: 15000 },
  tmpfsBatches: 600,
  fsyncMs: 1000,
};

const QUICK_CONFIG: Config = {
  rounds: 1,
  slices: 3,
  stmtRows: 20_000,
  stmtPoints: 20_000,
  stmtRanges: 400,
  appends: { "delete/EXTRA": 300, "wal/FULL": 600, "wal/NORMAL": 1200, "delete/FULL": 300 },
  warmup: 50,
  // As in the full run: below about 4,500 appends V8 has not tiered up (0.15 s on tmpfs).
  jitWarmup: 6000,
  jitWarmupBatches: 60,
  batches: { delete: 50, wal: 80 },
  batchWarmup: 5,
  batchSize: 100,
  tmpfsAppends: { delete: 1000, wal: 3000 },
  tmpfsBatches: 100,
  fsyncMs: 500,
};

/** The append scenarios: the store's two policies, then two extra rows. */
const APPEND_SCENARIOS: { mode: Mode; sync: Sync; store: boolean }[] = [
  { mode: "delete", sync: "EXTRA", store: true },
  { mode: "wal", sync: "FULL", store: true },
  { mode: "wal", sync: "NORMAL", store: false },
  { mode: "delete", sync: "FULL", store: false },
];

// The store's SQL, copied from session_db/session_db.ts (appendMessage, appendMessages,
// createSession) so that the replicas run the very same statements. The schema is the
// store's own migrations.
const SESSION_COLUMNS =
  "id, source, parent_session_id, branch_kind, started_at, ended_at, end_reason, message_count, handoff_state, handoff_platform, handoff_error, rewind_count, title";
const STORE_SQL = {
  begin: "BEGIN IMMEDIATE",
  commit: "COMMIT",
  // appendMessage checks the session with one column, appendMessages with all of them.
  selectAppendable: "SELECT end_reason FROM sessions WHERE id = ?",
  selectSession: `SELECT ${SESSION_COLUMNS} FROM sessions WHERE id = ?`,
  insertMessage:
    `INSERT INTO messages (session_id, role, content, tool_call_id, tool_calls, tool_name, timestamp)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
  updateOne: "UPDATE sessions SET message_count = message_count + 1 WHERE id = ?",
  updateMany: "UPDATE sessions SET message_count = message_count + ? WHERE id = ?",
  createSession: `INSERT INTO sessions (id, source, started_at, title) VALUES (?, ?, ?, ?)
         ON CONFLICT(id) DO UPDATE SET title = COALESCE(sessions.title, excluded.title)`,
};
const SCHEMA_SCRIPT = `BEGIN IMMEDIATE;\n${
  MIGRATIONS.join("\n")
}\nINSERT INTO schema_version (version) VALUES (${SCHEMA_VERSION});\nCOMMIT;`;
const SESSION_ID = "bench-session";

/** The STORE_SQL statements no longer found in session_db.ts (the copy drifted). */
function storeSqlDrift(): string[] {
  const squash = (text: string) => text.replace(/\s+/g, " ").trim();
  let source: string;
  try {
    source = squash(Deno.readTextFileSync(join(ROOT, "session_db", "session_db.ts")));
  } catch {
    return ["session_db/session_db.ts is unreadable"];
  }
  const expected: [string, string][] = [
    ["SESSION_COLUMNS", SESSION_COLUMNS],
    ["selectAppendable", STORE_SQL.selectAppendable],
    ["selectSession", "SELECT ${SESSION_COLUMNS} FROM sessions WHERE id = ?"],
    ["insertMessage", STORE_SQL.insertMessage],
    ["updateOne", STORE_SQL.updateOne],
    ["updateMany", STORE_SQL.updateMany],
    ["createSession", STORE_SQL.createSession],
  ];
  return expected.filter(([, sql]) => !source.includes(squash(sql))).map(([name]) => name);
}
/** About 200 bytes of message text; each message appends its index. */
const CONTENT = "The quick brown fox jumps over the lazy dog. ".repeat(4) + "#";

// --- jobs and results --------------------------------------------------------------

interface StmtJob {
  kind: "stmt";
  impl: "binding" | "node";
  path: string;
  rows: number;
  points: number;
  ranges: number;
}

interface StmtResult {
  sqlite: string;
  library: string;
  insertPerSec: number;
  pointPerSec: number;
  rangeRowsPerSec: number;
}

interface AppendJob {
  kind: "append";
  impl: Impl;
  path: string;
  mode: Mode;
  sync: Sync;
  n: number;
  /** How many turns the parent gives this child among its peers (see `timed`). */
  slices: number;
  /** Python only: idle threads started first (a diagnostic of the runtime's threads). */
  idleThreads?: number;
  /**
   * Transactions run first on a scratch file in WAL on tmpfs, so that a JIT has tiered
   * up before the measured file is opened (every implementation gets the same).
   */
  jitWarmup?: number;
  batch: number;
  warmup: number;
  content: string;
  sessionId: string;
  schema: string;
  sql: typeof STORE_SQL;
}

interface AppendResult {
  seconds: number;
  /** CPU time of the timed appends (user + system), the part the disk does not explain. */
  cpuSeconds?: number;
  transactions: number;
  messages: number;
  sqlite: string;
  journalMode: string;
  synchronous: string;
  note?: string;
}

interface InfoResult {
  sqlite: string;
  cpu?: string;
  library?: string;
  python?: string;
}

type Job =
  | StmtJob
  | AppendJob
  | { kind: "info"; impl: "binding" | "node" }
  | { kind: "tmpfs"; action: "create" | "remove"; path?: string }
  | { kind: "proc"; pid: number };

const TMPFS_PREFIX = "/dev/shm/session-db-bench-";

// --- workers (child processes) -----------------------------------------------------

function now(): number {
  return Date.now() / 1000;
}

/** A small deterministic generator, so that both sides read the same rows. */
function lcg(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state;
  };
}

function keys(count: number, max: number, seed: number): Int32Array {
  const next = lcg(seed);
  const out = new Int32Array(count);
  for (let i = 0; i < count; i++) out[i] = 1 + (next() % max);
  return out;
}

const STMT_TABLE = (name: string) =>
  `CREATE TABLE ${name} (id INTEGER PRIMARY KEY, a INTEGER NOT NULL, b TEXT NOT NULL, c REAL NOT NULL)`;

function stmtBinding(job: StmtJob): StmtResult {
  const db = new Database(job.path);
  try {
    db.exec("PRAGMA journal_mode = WAL");
    db.exec("PRAGMA synchronous = NORMAL");
    const phase = (table: string, rows: number, points: number, ranges: number) => {
      db.exec(STMT_TABLE(table));
      const insert = db.prepare(`INSERT INTO ${table} (a, b, c) VALUES (?, ?, ?)`);
      let t = performance.now();
      db.exec("BEGIN");
      for (let i = 1; i <= rows; i++) insert.run(i, `row-${i}`, i * 0.25);
      db.exec("COMMIT");
      const insertMs = performance.now() - t;

      const point = db.prepare(`SELECT id, a, b, c FROM ${table} WHERE id = ?`);
      const ids = keys(points, rows, 7);
      let sum = 0;
      t = performance.now();
      for (let i = 0; i < points; i++) sum += point.get<{ a: number }>(ids[i]!)?.a ?? 0;
      const pointMs = performance.now() - t;

      const range = db.prepare(
        `SELECT id, a, b, c FROM ${table} WHERE id >= ? ORDER BY id LIMIT 100`,
      );
      const starts = keys(ranges, rows - 100, 11);
      let count = 0;
      t = performance.now();
      for (let i = 0; i < ranges; i++) count += range.all(starts[i]!).length;
      const rangeMs = performance.now() - t;
      if (sum <= 0 || count !== ranges * 100) throw new Error("binding: wrong results");
      return { insertMs, pointMs, rangeMs, rangeRows: count };
    };
    phase("warm", 5000, 5000, 100);
    const r = phase("t", job.rows, job.points, job.ranges);
    return {
      sqlite: sqliteVersion(),
      library: sqliteLibraryPath(),
      insertPerSec: job.rows / (r.insertMs / 1000),
      pointPerSec: job.points / (r.pointMs / 1000),
      rangeRowsPerSec: r.rangeRows / (r.rangeMs / 1000),
    };
  } finally {
    db.close();
  }
}

function stmtNode(job: StmtJob): StmtResult {
  const db = new DatabaseSync(job.path);
  try {
    db.exec("PRAGMA journal_mode = WAL");
    db.exec("PRAGMA synchronous = NORMAL");
    const phase = (table: string, rows: number, points: number, ranges: number) => {
      db.exec(STMT_TABLE(table));
      const insert = db.prepare(`INSERT INTO ${table} (a, b, c) VALUES (?, ?, ?)`);
      let t = performance.now();
      db.exec("BEGIN");
      for (let i = 1; i <= rows; i++) insert.run(i, `row-${i}`, i * 0.25);
      db.exec("COMMIT");
      const insertMs = performance.now() - t;

      const point = db.prepare(`SELECT id, a, b, c FROM ${table} WHERE id = ?`);
      const ids = keys(points, rows, 7);
      let sum = 0;
      t = performance.now();
      for (let i = 0; i < points; i++) {
        sum += Number((point.get(ids[i]!) as { a: number } | undefined)?.a ?? 0);
      }
      const pointMs = performance.now() - t;

      const range = db.prepare(
        `SELECT id, a, b, c FROM ${table} WHERE id >= ? ORDER BY id LIMIT 100`,
      );
      const starts = keys(ranges, rows - 100, 11);
      let count = 0;
      t = performance.now();
      for (let i = 0; i < ranges; i++) count += range.all(starts[i]!).length;
      const rangeMs = performance.now() - t;
      if (sum <= 0 || count !== ranges * 100) throw new Error("node:sqlite: wrong results");
      return { insertMs, pointMs, rangeMs, rangeRows: count };
    };
    phase("warm", 5000, 5000, 100);
    const r = phase("t", job.rows, job.points, job.ranges);
    const version = db.prepare("SELECT sqlite_version() AS v").get() as { v: string };
    return {
      sqlite: version.v,
      library: "bundled in deno",
      insertPerSec: job.rows / (r.insertMs / 1000),
      pointPerSec: job.points / (r.pointMs / 1000),
      rangeRowsPerSec: r.rangeRows / (r.rangeMs / 1000),
    };
  } finally {
    db.close();
  }
}

/**
 * Runs `warmup` untimed steps, then times `n` more in the slices the parent asks for:
 * the child prints `ready`, runs as many steps as each stdin line says and answers with
 * their time, until `done`; returns the total. With `n` = 0 (a warm-up run) it returns
 * after the warmup.
 */
function timed(job: AppendJob, step: (i: number) => void): number {
  for (let i = 0; i < job.warmup; i++) step(i);
  lastCpuSeconds = 0;
  if (job.n === 0) return 0;
  const encoder = new TextEncoder();
  const say = (line: string) => Deno.stdout.writeSync(encoder.encode(line + "\n"));
  say("ready");
  let next = job.warmup;
  let seconds = 0;
  let cpuSeconds = 0;
  for (let line = readLineSync(); line !== "done"; line = readLineSync()) {
    const count = Number(line);
    if (!Number.isInteger(count) || count <= 0) throw new Error(`bad slice request: ${line}`);
    const cpu = cpuUsage();
    const started = performance.now();
    for (const end = next + count; next < end; next++) step(next);
    const s = (performance.now() - started) / 1000;
    const used = cpuUsage(cpu);
    seconds += s;
    cpuSeconds += (used.user + used.system) / 1e6;
    say(JSON.stringify({ seconds: s }));
  }
  if (next !== job.warmup + job.n) throw new Error(`ran ${next - job.warmup} of ${job.n} steps`);
  lastCpuSeconds = cpuSeconds;
  return seconds;
}

/** One line from stdin, without its newline (the parent's slice requests are short). */
function readLineSync(): string {
  const byte = new Uint8Array(1);
  let line = "";
  for (;;) {
    const n = Deno.stdin.readSync(byte);
    if (n === null) throw new Error("stdin closed before done");
    if (n === 0) continue;
    if (byte[0] === 10) return line;
    line += String.fromCharCode(byte[0]!);
  }
}

/** CPU time (user + system, all threads) of the last `timed` run. */
let lastCpuSeconds = 0;

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
    const expectedSync = job.mode === "wal" ? "FULL" : "EXTRA";
    if (job.sync !== expectedSync) {
      throw new Error(`SessionDB has no synchronous option (it uses ${expectedSync})`);
    }
    store.createSession(job.sessionId);
    const sid = job.sessionId;
    const batch = job.batch;
    const seconds = batch === 1
      ? timed(job, (i) => {
        store.appendMessage(sid, { role: "user", content: job.content + i });
      })
      : timed(job, (i) => {
        const messages = [];
        for (let k = 0; k < batch; k++) {
          messages.push({ role: "user" as const, content: job.content + (i * batch + k) });
        }
        store.appendMessages(sid, messages);
      });
    const count = store.getSession(sid)?.messageCount;
    if (count !== (job.warmup + job.n) * batch) throw new Error(`message_count ${count}`);
    return {
      seconds,
      cpuSeconds: lastCpuSeconds,
      transactions: job.n,
      messages: job.n * batch,
      sqlite: store.sqliteVersion,
      journalMode: store.journalMode,
      synchronous: expectedSync,
      ...(note ? { note } : {}),
    };
  } finally {
    store.close();
  }
}

const SYNC_NAMES = ["OFF", "NORMAL", "FULL", "EXTRA"];

function appendBinding(job: AppendJob): AppendResult {
  const db = new Database(job.path);
  try {
    db.setBusyTimeout(1000);
    db.exec(`PRAGMA journal_mode = ${job.mode.toUpperCase()}`);
    db.exec(`PRAGMA synchronous = ${job.sync}`);
    db.exec("PRAGMA foreign_keys = ON");
    db.exec(SCHEMA_SCRIPT);
    const sql = job.sql;
    const sid = job.sessionId;
    db.exec(sql.begin);
    db.prepare(sql.createSession).run(sid, "cli", now(), null);
    db.exec(sql.commit);
    const select = db.prepare(job.batch === 1 ? sql.selectAppendable : sql.selectSession);
    const insert = db.prepare(sql.insertMessage);
    const updateOne = db.prepare(sql.updateOne);
    const updateMany = db.prepare(sql.updateMany);
    const batch = job.batch;
    const step = (i: number) => {
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
    };
    const seconds = timed(job, step);
    const count = db.prepare("SELECT message_count FROM sessions WHERE id = ?").value<[number]>(
      sid,
    )?.[0];
    if (count !== (job.warmup + job.n) * batch) throw new Error(`message_count ${count}`);
    return {
      seconds,
      cpuSeconds: lastCpuSeconds,
      transactions: job.n,
      messages: job.n * batch,
      sqlite: sqliteVersion(),
      journalMode: String(db.prepare("PRAGMA journal_mode").value()?.[0]),
      synchronous: SYNC_NAMES[Number(db.prepare("PRAGMA synchronous").value()?.[0])] ?? "?",
    };
  } finally {
    db.close();
  }
}

function appendNode(job: AppendJob): AppendResult {
  const db = new DatabaseSync(job.path);
  try {
    db.exec("PRAGMA busy_timeout = 1000");
    db.exec(`PRAGMA journal_mode = ${job.mode.toUpperCase()}`);
    db.exec(`PRAGMA synchronous = ${job.sync}`);
    db.exec("PRAGMA foreign_keys = ON");
    db.exec(SCHEMA_SCRIPT);
    const sql = job.sql;
    const sid = job.sessionId;
    db.exec(sql.begin);
    db.prepare(sql.createSession).run(sid, "cli", now(), null);
    db.exec(sql.commit);
    const select = db.prepare(job.batch === 1 ? sql.selectAppendable : sql.selectSession);
    const insert = db.prepare(sql.insertMessage);
    const updateOne = db.prepare(sql.updateOne);
    const updateMany = db.prepare(sql.updateMany);
    const batch = job.batch;
    const step = (i: number) => {
      db.exec(sql.begin);
      try {
        if (!select.get(sid)) throw new Error("session missing");
        if (batch === 1) {
          Number(insert.run(sid, "user", job.content + i, null, null, null, now()).lastInsertRowid);
          updateOne.run(sid);
        } else {
          const ids: number[] = [];
          for (let k = 0; k < batch; k++) {
            const r = insert.run(
              sid,
              "user",
              job.content + (i * batch + k),
              null,
              null,
              null,
              now(),
            );
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
    };
    const seconds = timed(job, step);
    const row = db.prepare("SELECT message_count AS c FROM sessions WHERE id = ?").get(sid) as
      | { c: number }
      | undefined;
    if (row?.c !== (job.warmup + job.n) * batch) throw new Error(`message_count ${row?.c}`);
    const version = db.prepare("SELECT sqlite_version() AS v").get() as { v: string };
    const journal = db.prepare("PRAGMA journal_mode").get() as { journal_mode: string };
    const sync = db.prepare("PRAGMA synchronous").get() as { synchronous: number };
    return {
      seconds,
      cpuSeconds: lastCpuSeconds,
      transactions: job.n,
      messages: job.n * batch,
      sqlite: version.v,
      journalMode: journal.journal_mode,
      synchronous: SYNC_NAMES[sync.synchronous] ?? "?",
    };
  } finally {
    db.close();
  }
}

function runWorker(job: Job): unknown {
  if (job.kind === "info") {
    if (job.impl === "binding") return { sqlite: sqliteVersion(), library: sqliteLibraryPath() };
    const db = new DatabaseSync(":memory:");
    const row = db.prepare("SELECT sqlite_version() AS v").get() as { v: string };
    db.close();
    // /proc/cpuinfo needs --allow-all in Deno 2, which children have.
    return { sqlite: row.v, library: "bundled in deno", cpu: cpuModel() };
  }
  if (job.kind === "tmpfs") {
    if (job.action === "create") {
      try {
        if (!Deno.statSync("/dev/shm").isDirectory) return {};
      } catch {
        return {};
      }
      return { path: Deno.makeTempDirSync({ dir: "/dev/shm", prefix: "session-db-bench-" }) };
    }
    if (job.path?.startsWith(TMPFS_PREFIX)) Deno.removeSync(job.path, { recursive: true });
    return {};
  }
  if (job.kind === "proc") {
    // /proc/<pid>/status needs --allow-all in Deno 2, which only the children have.
    const text = Deno.readTextFileSync(`/proc/${job.pid}/status`);
    const kib = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(text)?.[1]);
    return { vmHwmKiB: kib("VmHWM"), vmRssKiB: kib("VmRSS") };
  }
  if (job.kind === "stmt") return job.impl === "binding" ? stmtBinding(job) : stmtNode(job);
  if (job.jitWarmup) {
    // Steady state, as in a long-running agent: V8 moves the append path to its top
    // tier only after a few thousand calls, so they run first on a scratch file.
    const dir = Deno.makeTempDirSync({ dir: isDir("/dev/shm") ? "/dev/shm" : dirname(job.path) });
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

function appendWith(job: AppendJob): AppendResult {
  switch (job.impl) {
    case "sessiondb":
      return appendSessionDB(job);
    case "binding":
      return appendBinding(job);
    case "node":
      return appendNode(job);
    default:
      throw new Error(`no Deno worker for ${job.impl}`);
  }
}

function isDir(path: string): boolean {
  try {
    return Deno.statSync(path).isDirectory;
  } catch {
    return false;
  }
}

// --- the parent --------------------------------------------------------------------

/** Which SQLite the binding loads in a child: the fixed build, or the system library. */
type Lib = "fixed" | "system";

/** An implementation on a given library. */
export type VariantKey =
  | "sessiondb"
  | "sessiondb-fixed"
  | "binding"
  | "python"
  | "python-fixed"
  | "python-threads"
  | "python-control"
  | "node";
const VARIANTS: Record<VariantKey, { impl: Impl; lib?: Lib; idleThreads?: number }> = {
  "sessiondb": { impl: "sessiondb", lib: "system" },
  "sessiondb-fixed": { impl: "sessiondb", lib: "fixed" },
  "binding": { impl: "binding", lib: "system" },
  "python": { impl: "python" },
  // Python's sqlite3 on the fixed build (LD_PRELOAD), for a same-version three-way.
  "python-fixed": { impl: "python", lib: "fixed" },
  // Python with as many idle threads as a Deno process runs besides its main thread
  // (2 V8 workers, 3 tokio workers): what the runtime's threads alone cost.
  "python-threads": { impl: "python", idleThreads: 5 },
  // Python again, as a peer of itself: its ratio to "python" is the method's resolution.
  "python-control": { impl: "python" },
  "node": { impl: "node" },
};

function childEnv(lib: Lib | undefined): Record<string, string> {
  const env = Deno.env.toObject();
  for (const name of ["DENO_SQLITE_PATH", "SESSION_DB_CRASH_AT", "SESSION_DB_JOURNAL_MODE"]) {
    delete env[name];
  }
  if (lib === "fixed") env.DENO_SQLITE_PATH = fixedSqlitePath();
  return env;
}

/** A Python child's environment: the fixed build is preloaded over the system library. */
function pythonEnv(lib: Lib | undefined): Record<string, string> {
  const env = childEnv(undefined);
  if (lib === "fixed") env.LD_PRELOAD = fixedSqlitePath();
  return env;
}

async function spawn(cmd: string, args: string[], env: Record<string, string>): Promise<unknown> {
  const output = await new Deno.Command(cmd, {
    args,
    cwd: ROOT,
    env,
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stdout = new TextDecoder().decode(output.stdout).trim();
  const stderr = new TextDecoder().decode(output.stderr).trim();
  if (!output.success) {
    throw new Error(
      `${cmd} ${args.slice(0, 3).join(" ")} ... failed (exit ${output.code}): ${stderr || stdout}`,
    );
  }
  const last = stdout.split("\n").at(-1) ?? "";
  try {
    return JSON.parse(last);
  } catch {
    throw new Error(`${cmd}: no JSON result in its output: ${stdout}\n${stderr}`);
  }
}

function denoChild(job: Job, lib: Lib | undefined): Promise<unknown> {
  return spawn(
    Deno.execPath(),
    ["run", "-A", THIS_FILE, "--worker", JSON.stringify(job)],
    childEnv(lib),
  );
}

function pythonChild(job: object): Promise<unknown> {
  return spawn("python3", [PYTHON_SCRIPT, JSON.stringify(job)], childEnv(undefined));
}

/** How long an interleaved child may take to answer one request before the bench fails. */
const LIVE_REPLY_MS = 300_000;

/**
 * An append child run in slices (`AppendJob.slices`): it warms up, says `ready`, then
 * runs what it is asked, a slice at a time, so that the parent can interleave the
 * implementations finely and the disk's drift hits them alike.
 */
export class LiveChild {
  readonly name: string;
  #child: Deno.ChildProcess;
  #lines: AsyncIterator<string>;
  #stdin: WritableStreamDefaultWriter<Uint8Array>;
  #stderr: Promise<string>;

  constructor(name: string, cmd: string, args: string[], env: Record<string, string>) {
    this.name = name;
    this.#child = new Deno.Command(cmd, {
      args,
      cwd: ROOT,
      env,
      clearEnv: true,
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    this.#lines = readLines(this.#child.stdout);
    this.#stdin = this.#child.stdin.getWriter();
    this.#stderr = new Response(this.#child.stderr).text();
  }

  /** Waits for the warmup to end. */
  async ready(): Promise<void> {
    const line = await this.#next("ready");
    if (line !== "ready") throw new Error(`${this.name}: expected ready, got: ${line}`);
  }

  /** Runs `count` more steps; returns their wall time in seconds. */
  async slice(count: number): Promise<number> {
    await this.#stdin.write(new TextEncoder().encode(`${count}\n`));
    const line = await this.#next(`a slice of ${count}`);
    const seconds = (JSON.parse(line) as { seconds?: unknown }).seconds;
    if (typeof seconds !== "number") throw new Error(`${this.name}: bad slice answer: ${line}`);
    return seconds;
  }

  /** Ends the run; returns the child's result (its last line). */
  async finish(): Promise<unknown> {
    await this.#stdin.write(new TextEncoder().encode("done\n"));
    await this.#stdin.close();
    const line = await this.#next("its result");
    const status = await this.#child.status;
    if (!status.success) {
      throw new Error(`${this.name} failed (exit ${status.code}): ${await this.#stderr}`);
    }
    return JSON.parse(line);
  }

  /** Kills the child if it still runs (after a failure). */
  kill(): void {
    try {
      this.#child.kill("SIGKILL");
    } catch {
      // already exited
    }
  }

  async #next(what: string): Promise<string> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`${this.name}: no answer within ${LIVE_REPLY_MS} ms for ${what}`)),
        LIVE_REPLY_MS,
      );
    });
    try {
      const next = await Promise.race([this.#lines.next(), deadline]);
      if (next.done) {
        this.kill();
        throw new Error(`${this.name} ended before ${what}: ${(await this.#stderr).trim()}`);
      }
      return next.value;
    } finally {
      clearTimeout(timer);
    }
  }
}

/** What an append run varies; the rest of an `AppendJob` is the store's SQL and schema. */
export type AppendOptions = Pick<
  AppendJob,
  "path" | "mode" | "sync" | "n" | "slices" | "batch" | "warmup" | "jitWarmup"
>;

/**
 * Starts one implementation's append child in slices (`AppendJob.slices`), running the
 * store's statements, pragmas and schema.
 *
 * @param variant The implementation and library, e.g. `"sessiondb"` or `"python"`.
 * @param options The file, journal mode, synchronous level and counts.
 * @returns The child; call `ready()`, then `slice(n)` until `n` steps ran, then `finish()`.
 * @example
 * ```ts ignore
 * const child = appendChild("python", { path: "/tmp/a.db", mode: "delete", sync: "EXTRA", n: 4, slices: 2, batch: 1, warmup: 1 });
 * await child.ready();
 * await child.slice(2);
 * await child.slice(2);
 * console.log(await child.finish());
 * ```
 */
export function appendChild(variant: VariantKey, options: AppendOptions): LiveChild {
  const { impl, lib, idleThreads } = VARIANTS[variant];
  const job: AppendJob = {
    kind: "append",
    impl,
    ...options,
    content: CONTENT,
    sessionId: SESSION_ID,
    schema: SCHEMA_SCRIPT,
    sql: STORE_SQL,
    ...(idleThreads ? { idleThreads } : {}),
  };
  return impl === "python"
    ? new LiveChild(variant, "python3", [PYTHON_SCRIPT, JSON.stringify(job)], pythonEnv(lib))
    : new LiveChild(
      variant,
      Deno.execPath(),
      ["run", "-A", THIS_FILE, "--worker", JSON.stringify(job)],
      childEnv(lib),
    );
}

async function* readLines(stream: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  let rest = "";
  for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
    rest += chunk;
    for (let at = rest.indexOf("\n"); at >= 0; at = rest.indexOf("\n")) {
      yield rest.slice(0, at);
      rest = rest.slice(at + 1);
    }
  }
  if (rest) yield rest;
}

/** `n` split into `slices` parts that differ by at most one. */
export function sliceSizes(n: number, slices: number): number[] {
  const k = Math.max(1, Math.min(slices, n));
  return Array.from({ length: k }, (_, i) => Math.floor(n / k) + (i < n % k ? 1 : 0));
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** (max - min) / median of the rounds, or undefined with fewer than two. */
function spread(values: number[] | undefined): number | undefined {
  if (!values || values.length < 2) return undefined;
  return (Math.max(...values) - Math.min(...values)) / median(values);
}

/** Rotates the order of implementations each round, so none always runs first. */
function rotated<T>(items: T[], round: number): T[] {
  const k = round % items.length;
  return [...items.slice(k), ...items.slice(0, k)];
}

function fsyncRate(dir: string, ms: number): number {
  const path = join(dir, "fsync.tmp");
  const file = Deno.openSync(path, { create: true, write: true, truncate: true });
  const byte = new Uint8Array([1]);
  let count = 0;
  const started = performance.now();
  let elapsed = 0;
  try {
    while ((elapsed = performance.now() - started) < ms) {
      file.writeSync(byte);
      file.syncSync(); // fsync(2); Deno 2 has no Deno.fsyncSync
      count++;
    }
  } finally {
    file.close();
    Deno.removeSync(path);
  }
  return count / (elapsed / 1000);
}

function cpuModel(): string {
  try {
    const text = Deno.readTextFileSync("/proc/cpuinfo");
    const model = /^model name\s*:\s*(.+)$/m.exec(text)?.[1]?.trim() ?? "unknown";
    const cores = text.match(/^processor\s*:/gm)?.length ?? navigator.hardwareConcurrency;
    return `${model} (${cores} logical cores)`;
  } catch {
    return `unknown (${navigator.hardwareConcurrency} logical cores)`;
  }
}

function isFile(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
}

function parseArgs(args: string[]): { quick: boolean; json: string; suite: boolean } {
  let quick = false;
  let suite = true;
  let json = DEFAULT_JSON;
  // `deno task` runs in the project root; INIT_CWD is where it was started.
  const cwd = Deno.env.get("INIT_CWD") ?? Deno.cwd();
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--quick") quick = true;
    else if (arg === "--no-suite") suite = false;
    else if (arg === "--json") {
      const value = args[++i];
      if (!value) throw new Error("--json needs a path: deno task bench --json out.json");
      json = resolve(cwd, value);
    } else if (arg.startsWith("--json=")) json = resolve(cwd, arg.slice("--json=".length));
    else {
      throw new Error(`Unknown argument "${arg}": use --quick, --no-suite and/or --json <path>`);
    }
  }
  return { quick, json, suite };
}

const fmt = (value: number | undefined): string =>
  value === undefined || !Number.isFinite(value) ? "-" : Math.round(value).toLocaleString("en-US");
const ratio = (a: number | undefined, b: number | undefined): number | undefined =>
  a === undefined || b === undefined || b === 0 ? undefined : a / b;
/**
 * The median of the per-round ratios a[r] / b[r]: the implementations of one round ran
 * interleaved, so a drift of the disk between rounds cancels out of each pair.
 */
function pairRatio(a: number[] | undefined, b: number[] | undefined): number | undefined {
  if (!a?.length || !b?.length || a.length !== b.length) {
    return ratio(a && median(a), b && median(b));
  }
  return median(a.map((x, i) => x / b[i]!));
}

/** A row's ratio to a peer: pair by pair when the rounds are known. */
function rowRatio(r: TableRow, peer: "python" | "node"): number | undefined {
  if (r[peer] === undefined) return undefined;
  return r.rounds ? pairRatio(r.rounds.ours, r.rounds[peer]) : ratio(r.ours, r[peer]);
}

const fmtRatio = (r: number | undefined): string => (r === undefined ? "-" : `${r.toFixed(2)}x`);

interface TableRow {
  section: string;
  benchmark: string;
  oursLabel: string;
  ours?: number | undefined;
  python?: number | undefined;
  node?: number | undefined;
  /** The largest (max - min) / median over the row's implementations' rounds. */
  spread?: number | undefined;
  /** Each round's rate, for ratios pair by pair. */
  rounds?: {
    ours?: number[] | undefined;
    python?: number[] | undefined;
    node?: number[] | undefined;
  };
  /** Commits per second, for fsync/txn. */
  txnPerSec?: number | undefined;
  fsyncsPerTxn?: number | undefined;
  target: string;
  result: string;
}

function printTable(rows: TableRow[]): void {
  const header = [
    "#",
    "benchmark",
    "ours",
    "ours/s",
    "Python/s",
    "node/s",
    "ours/Py",
    "ours/node",
    "spread",
    "fsync/txn",
    "target",
    "result",
  ];
  const cells = rows.map((r) => [
    r.section,
    r.benchmark,
    r.oursLabel,
    fmt(r.ours),
    fmt(r.python),
    fmt(r.node),
    fmtRatio(rowRatio(r, "python")),
    fmtRatio(rowRatio(r, "node")),
    r.spread === undefined ? "-" : `${Math.round(r.spread * 100)}%`,
    r.fsyncsPerTxn === undefined ? "-" : r.fsyncsPerTxn.toFixed(1),
    r.target,
    r.result,
  ]);
  const numeric = new Set([3, 4, 5, 6, 7, 8, 9]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: string[]) =>
    c.map((v, i) => numeric.has(i) ? v.padStart(widths[i]!) : v.padEnd(widths[i]!)).join("  ")
      .trimEnd();
  console.log(line(header));
  console.log(widths.map((w) => "-".repeat(w)).join("  "));
  let previous = "";
  for (const [i, c] of cells.entries()) {
    if (previous && rows[i]!.section !== previous) console.log("");
    previous = rows[i]!.section;
    console.log(line(c));
  }
}

/** PASS, or FAIL naming the missed targets. */
function verdict(checks: [string, number | undefined, number][]): string {
  const missed = checks.filter(([, r, min]) => r !== undefined && r < min).map(([name]) => name);
  if (checks.every(([, r]) => r === undefined)) return "-";
  return missed.length ? `FAIL (${missed.join(", ")})` : "PASS";
}

// --- 4. the suite, the crash tiers, the writer's memory ------------------------------

/** A row of the §4 table: one figure, its target and verdict. */
interface SuiteRow {
  benchmark: string;
  value?: number | undefined;
  unit: string;
  target: string;
  result: string;
  detail: string;
}

/** The exact flags of the project's `deno task` entries (deno.json). */
const TASK_FLAGS = [
  "--allow-read",
  "--allow-write",
  "--allow-env",
  "--allow-ffi",
  "--allow-run",
  "--allow-sys",
];

interface Timed {
  seconds: number;
  success: boolean;
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `deno <args>` in the project root and times it (wall clock, start-up included). */
async function timedDeno(args: string[]): Promise<Timed> {
  const started = performance.now();
  const output = await new Deno.Command(Deno.execPath(), {
    args,
    cwd: ROOT,
    env: childEnv(undefined),
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const seconds = (performance.now() - started) / 1000;
  const decoder = new TextDecoder();
  return {
    seconds,
    success: output.success,
    code: output.code,
    stdout: decoder.decode(output.stdout),
    stderr: decoder.decode(output.stderr),
  };
}

/** The slowest top-level tests of a `deno test` output ("name ... ok (1s)"). */
function slowestTests(output: string, count: number): { name: string; ms: number }[] {
  // deno test colours its output even into a pipe: strip the escapes first.
  // deno-lint-ignore no-control-regex
  const plain = output.replace(/\x1b\[[0-9;]*m/g, "");
  const tests: { name: string; ms: number }[] = [];
  for (const line of plain.split("\n")) {
    const m = /^(\S.*?) \.\.\. (?:ok|FAILED|ignored) \((\d+(?:\.\d+)?)(ms|s|m)\)$/.exec(line);
    if (!m) continue;
    const unit = m[3] === "ms" ? 1 : m[3] === "s" ? 1000 : 60_000;
    tests.push({ name: m[1]!, ms: Number(m[2]) * unit });
  }
  return tests.sort((a, b) => b.ms - a.ms).slice(0, count);
}

/** The names of the failed top-level tests of a `deno test` output. */
function failedTests(output: string): string[] {
  // deno-lint-ignore no-control-regex
  const plain = output.replace(/\x1b\[[0-9;]*m/g, "");
  const names = new Set<string>();
  for (const line of plain.split("\n")) {
    const m = /^(\S.*?) \.\.\. FAILED/.exec(line);
    if (m) names.add(m[1]!);
  }
  return [...names];
}

function below(value: number | undefined, max: number): string {
  return value === undefined || !Number.isFinite(value) ? "-" : value < max ? "PASS" : "FAIL";
}

function atLeast(value: number | undefined, min: number): string {
  return value === undefined || !Number.isFinite(value) ? "-" : value >= min ? "PASS" : "FAIL";
}

/** `deno test -A` and `deno task matrix`, timed as child processes. */
async function suiteWallTimes(work: string, log: (line: string) => void) {
  const rows: SuiteRow[] = [];
  log("deno test -A");
  const test = await timedDeno(["test", "-A"]);
  const slow = slowestTests(test.stdout + test.stderr, 5);
  const failed = failedTests(test.stdout + test.stderr);
  const summary = /(ok|FAILED) \| (\d+) passed(?: \((\d+) steps?\))? \| (\d+) failed/.exec(
    // deno-lint-ignore no-control-regex
    (test.stdout + test.stderr).replace(/\x1b\[[0-9;]*m/g, ""),
  );
  rows.push({
    benchmark: "deno test -A, wall time",
    value: test.seconds,
    unit: "s",
    target: "< 30 s",
    result: test.success ? below(test.seconds, 30) : "FAIL (tests failed)",
    detail: `${summary ? `${summary[2]} passed, ${summary[4]} failed` : `exit ${test.code}`}; ` +
      `slowest: ${
        slow.slice(0, 2).map((t) => `"${t.name.slice(0, 40)}" ${(t.ms / 1000).toFixed(1)} s`)
          .join(", ")
      } (more in the JSON)${failed.length ? `; failed: ${failed.join(", ")}` : ""}`,
  });
  log("deno task matrix");
  const matrixJson = join(work, "matrix.json");
  const matrix = await timedDeno(["run", ...TASK_FLAGS, "tools/matrix.ts", "--json", matrixJson]);
  let matrixDetail = `exit ${matrix.code}`;
  try {
    const report = JSON.parse(await Deno.readTextFile(matrixJson)) as {
      pass: number;
      fail: number;
      skip: number;
      seconds?: number;
    };
    matrixDetail += `; ${report.pass} PASS, ${report.fail} FAIL, ${report.skip} SKIP`;
  } catch {
    // no report: the exit code says enough
  }
  rows.push({
    benchmark: "deno task matrix (every cell x leg x library), wall time",
    value: matrix.seconds,
    unit: "s",
    target: "< 120 s",
    result: matrix.success ? below(matrix.seconds, 120) : "FAIL (matrix failed)",
    detail: matrixDetail,
  });
  return {
    rows,
    slowestTests: slow,
    failedTests: failed,
    testExit: test.code,
    matrixExit: matrix.code,
  };
}

/** A short crash sweep (one leg, a sample of sequences) and a short power-loss run. */
async function crashTiers(work: string, fixedPresent: boolean, log: (line: string) => void) {
  const rows: SuiteRow[] = [];
  log("sweep (default leg, 20 sampled sequences)");
  const sweepJson = join(work, "sweep.json");
  const sweep = await timedDeno([
    "run",
    ...TASK_FLAGS,
    "tools/sweep.ts",
    "--legs",
    "default",
    "--sample",
    "20",
    "--json",
    sweepJson,
  ]);
  let sweepRate: number | undefined;
  let sweepDetail = `exit ${sweep.code}`;
  try {
    const report = JSON.parse(await Deno.readTextFile(sweepJson)) as {
      reports: { states: number; seconds: number }[];
    };
    const states = report.reports.reduce((n, r) => n + r.states, 0);
    const seconds = report.reports.reduce((n, r) => n + r.seconds, 0);
    sweepRate = states / seconds;
    sweepDetail = `${states} states in ${seconds.toFixed(1)} s (as the sweep prints it; ` +
      `${sweep.seconds.toFixed(1)} s wall with start-up)`;
  } catch {
    // no report: the sweep failed before writing it
  }
  rows.push({
    benchmark: "crash sweep, SIGKILL states checked per second",
    value: sweepRate,
    unit: "states/s",
    target: ">= 10",
    result: sweep.success ? atLeast(sweepRate, 10) : "FAIL (sweep failed)",
    detail: sweepDetail,
  });

  // WAL needs the fixed build (the system SQLite keeps new files in DELETE).
  const modes = fixedPresent ? "delete,wal" : "delete";
  log(`power-loss tier (${modes} x FULL,EXTRA, 2 runs per cell)`);
  const powerJson = join(work, "powerloss.json");
  const power = await timedDeno([
    "run",
    ...TASK_FLAGS,
    "tools/powerloss.ts",
    "--modes",
    modes,
    "--levels",
    "FULL,EXTRA",
    "--runs",
    "2",
    "--bench",
    "0",
    "--json",
    powerJson,
  ]);
  let powerRate: number | undefined;
  let powerDetail = `exit ${power.code}`;
  try {
    const report = JSON.parse(await Deno.readTextFile(powerJson)) as {
      cells: { statesChecked: number }[];
    };
    const states = report.cells.reduce((n, c) => n + c.statesChecked, 0);
    // The tool prints whole seconds only: the wall time (start-up included) is the figure.
    powerRate = states / power.seconds;
    powerDetail = `${states} last-sync/torn states in ${power.seconds.toFixed(1)} s wall ` +
      `(${modes} x FULL,EXTRA, 2 runs per cell)`;
  } catch {
    // no report
  }
  rows.push({
    benchmark: "power-loss tier, crash states checked per second",
    value: powerRate,
    unit: "states/s",
    target: ">= 10",
    result: power.success ? atLeast(powerRate, 10) : "FAIL (powerloss failed)",
    detail: powerDetail,
  });
  return { rows, sweepExit: sweep.code, powerExit: power.code };
}

/**
 * Peak RSS of cell 1's writer child (`cells/_prefix_writer.ts` on the reference target)
 * appending for `ms`: `VmHWM` read from /proc just before the SIGKILL.
 */
async function writerPeakRss(
  dir: string,
  ms: number,
): Promise<{ vmHwmKiB: number; appends: number; seconds: number }> {
  const db = join(dir, "writer.db");
  const acks = join(dir, "writer.acks");
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "cells/_prefix_writer.ts",
      new URL("../cells/reference_target.ts", import.meta.url).href,
      db,
      acks,
    ],
    cwd: ROOT,
    env: childEnv(undefined),
    clearEnv: true,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const stderr = child.stderr.pipeTo(new WritableStream());
  const started = performance.now();
  try {
    // Wait (bounded) for the first acknowledgement, then let it append for `ms`.
    const deadline = started + 30_000;
    const acked = async () => ((await Deno.stat(acks).catch(() => undefined))?.size ?? 0) > 0;
    while (performance.now() < deadline && !(await acked())) {
      await new Promise((r) => setTimeout(r, 20));
    }
    if (!(await acked())) throw new Error("the writer acknowledged no append within 30 s");
    const firstAck = performance.now();
    await new Promise((r) => setTimeout(r, ms));
    const status = await denoChild({ kind: "proc", pid: child.pid }, undefined) as {
      vmHwmKiB: number;
    };
    const lines = (await Deno.readTextFile(acks)).split("\n").filter(Boolean).length;
    return {
      vmHwmKiB: status.vmHwmKiB,
      appends: lines,
      seconds: (performance.now() - firstAck) / 1000,
    };
  } finally {
    try {
      child.kill("SIGKILL");
    } catch {
      // already gone
    }
    await child.status;
    await stderr.catch(() => {});
  }
}

function printSuiteTable(rows: SuiteRow[]): void {
  const header = ["#", "benchmark", "value", "target", "result", "detail"];
  const cells = rows.map((r) => [
    "4",
    r.benchmark,
    r.value === undefined || !Number.isFinite(r.value)
      ? "-"
      : `${r.value < 100 ? r.value.toFixed(1) : Math.round(r.value)} ${r.unit}`,
    r.target,
    r.result,
    r.detail,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: string[]) =>
    c.map((v, i) => i === 2 ? v.padStart(widths[i]!) : v.padEnd(widths[i]!)).join("  ").trimEnd();
  console.log(line(header));
  console.log(widths.map((w) => "-".repeat(w)).join("  "));
  for (const c of cells) console.log(line(c));
}

interface AppendRun {
  label: string;
  variant: VariantKey;
  /** Messages per second of each round. */
  rates: number[];
  results: AppendResult[];
}

async function main(): Promise<void> {
  const { quick, json, suite } = parseArgs(Deno.args);
  const config = quick ? QUICK_CONFIG : FULL_CONFIG;
  const log = (line: string) => console.error(`bench: ${line}`);
  const began = performance.now();
  await Deno.mkdir(BENCH_DIR, { recursive: true });
  const work = await Deno.makeTempDir({ dir: BENCH_DIR, prefix: "run-" });
  // tmpfs, where fsync costs nothing: the CPU cost of the same appends.
  // Deno 2 wants --allow-all for /dev/shm, which only the children have.
  const shm = Deno.build.os === "linux"
    ? await denoChild({ kind: "tmpfs", action: "create" }, undefined).then(
      (r) => (r as { path?: string }).path,
      () => undefined,
    )
    : undefined;
  let seq = 0;
  const dbPath = (dir: string, tag: string) =>
    join(dir, `${String(++seq).padStart(3, "0")}-${tag.replace(/[^\w.-]+/g, "_")}.db`);

  try {
    // Versions, from children (this process opens no database).
    const fixedPresent = isFile(fixedSqlitePath());
    const bindingLib: Lib = fixedPresent ? "fixed" : "system";
    const systemInfo = await denoChild({ kind: "info", impl: "binding" }, "system") as InfoResult;
    const fixedInfo = fixedPresent
      ? await denoChild({ kind: "info", impl: "binding" }, "fixed") as InfoResult
      : undefined;
    const nodeInfo = await denoChild({ kind: "info", impl: "node" }, undefined) as InfoResult;
    let pythonInfo: InfoResult | undefined;
    try {
      pythonInfo = await pythonChild({ kind: "info" }) as InfoResult;
    } catch (error) {
      log(`python3 unavailable, its column stays empty: ${(error as Error).message}`);
    }
    const bindingInfo = fixedInfo ?? systemInfo;
    const cpu = nodeInfo.cpu ?? cpuModel();

    const header = [
      "SessionDB / SQLite binding bench" + (quick ? " (--quick: 1 round, short runs)" : ""),
      `date:     ${new Date().toISOString()}`,
      `deno:     ${Deno.version.deno} (v8 ${Deno.version.v8}, ${Deno.build.os}/${Deno.build.arch})`,
      `cpu:      ${cpu}`,
      `sqlite:   binding ${bindingInfo.sqlite} ${
        fixedPresent ? "(fixed build" : "(system; no fixed build, run deno task sqlite"
      }: ${bindingInfo.library})`,
      `          system ${systemInfo.sqlite} (${systemInfo.library})`,
      `          node:sqlite ${nodeInfo.sqlite} (bundled in deno)`,
      `          Python ${pythonInfo?.python ?? "n/a"} sqlite3 ${pythonInfo?.sqlite ?? "n/a"}`,
      `settings: median of ${config.rounds} round(s), implementations alternate within a round`,
    ];
    const drift = storeSqlDrift();
    if (drift.length) {
      header.push(
        `WARNING:  session_db.ts no longer has the statements the replicas copy (${
          drift.join(", ")
        }): update STORE_SQL in tools/bench.ts`,
      );
    }

    const rows: TableRow[] = [];

    // 4. fsync rate: sampled at the start, before §3 and at the end (the disk drifts).
    const fsyncSamples: number[] = [];
    const sampleFsync = () => {
      log("fsync rate");
      fsyncSamples.push(fsyncRate(work, config.fsyncMs / 2));
    };
    sampleFsync();

    // 1. Statement rates.
    const stmtRuns: Record<"binding" | "node", StmtResult[]> = { binding: [], node: [] };
    for (let round = 0; round < config.rounds; round++) {
      for (const impl of rotated(["binding", "node"] as const, round)) {
        log(`statements round ${round + 1}/${config.rounds}: ${impl}`);
        const job: StmtJob = {
          kind: "stmt",
          impl,
          path: dbPath(work, `stmt-${impl}`),
          rows: config.stmtRows,
          points: config.stmtPoints,
          ranges: config.stmtRanges,
        };
        stmtRuns[impl].push(
          await denoChild(job, impl === "binding" ? bindingLib : undefined) as StmtResult,
        );
      }
    }
    const kilo = (n: number) => `${n / 1000}k`;
    const stmtRows: [string, "insertPerSec" | "pointPerSec" | "rangeRowsPerSec"][] = [
      [`INSERT ${kilo(config.stmtRows)} rows in 1 txn [rows/s]`, "insertPerSec"],
      [`point SELECT by rowid x${kilo(config.stmtPoints)} [rows/s]`, "pointPerSec"],
      [`100-row SELECT x${kilo(config.stmtRanges)} [rows/s]`, "rangeRowsPerSec"],
    ];
    for (const [benchmark, key] of stmtRows) {
      const b = stmtRuns.binding.map((r) => r[key]);
      const n = stmtRuns.node.map((r) => r[key]);
      rows.push({
        section: "2",
        benchmark,
        oursLabel: `binding ${bindingInfo.sqlite}`,
        ours: median(b),
        rounds: { ours: b, node: n },
        node: median(n),
        spread: Math.max(spread(b) ?? 0, spread(n) ?? 0) || undefined,
        target: "node >= 0.8",
        result: verdict([["node", pairRatio(b, n), 0.8]]),
      });
    }

    // 2 and 3. Appends, in child processes, rounds interleaved.
    const appendRuns: AppendRun[] = [];
    const runAppends = async (
      label: string,
      options: { mode: Mode; sync: Sync; n: number; batch: number; warmup: number; dir: string },
      variants: VariantKey[],
    ): Promise<Map<VariantKey, number[]>> => {
      const wanted = variants.filter((v) =>
        (VARIANTS[v].impl !== "python" || pythonInfo) &&
        (VARIANTS[v].lib !== "fixed" || fixedPresent) &&
        (v !== "python-fixed" || Deno.build.os === "linux") // LD_PRELOAD
      );
      const results = new Map<VariantKey, AppendResult[]>(wanted.map((v) => [v, []]));
      for (let round = 0; round < config.rounds; round++) {
        // Every implementation of the round runs at once, idle but for its slice: slice
        // k runs them in a rotated order, so the disk's drift within a round and the
        // slot after another's commit hit all of them alike.
        const live: [VariantKey, LiveChild][] = [];
        try {
          for (const variant of rotated(wanted, round)) {
            const child = appendChild(variant, {
              path: dbPath(options.dir, `${label}-${variant}`),
              mode: options.mode,
              sync: options.sync,
              n: options.n,
              slices: config.slices,
              batch: options.batch,
              warmup: options.warmup,
              jitWarmup: options.batch === 1 ? config.jitWarmup : config.jitWarmupBatches,
            });
            live.push([variant, child]);
            await child.ready(); // warm up one at a time
          }
          const sizes = sliceSizes(options.n, config.slices);
          for (let k = 0; k < sizes.length; k++) {
            for (const [, child] of rotated(live, k)) await child.slice(sizes[k]!);
          }
          for (const [variant, child] of live) {
            const result = await child.finish() as AppendResult;
            if (result.journalMode !== options.mode || result.synchronous !== options.sync) {
              throw new Error(
                `${variant} ran ${result.journalMode}/${result.synchronous}, not ${options.mode}/${options.sync}`,
              );
            }
            const version = VARIANTS[variant].lib === "fixed" ? fixedInfo?.sqlite : undefined;
            if (version && result.sqlite !== version) {
              throw new Error(`${variant} ran SQLite ${result.sqlite}, not the fixed ${version}`);
            }
            results.get(variant)!.push(result);
            log(
              `${label} round ${round + 1}/${config.rounds}: ${variant} ${
                fmt(result.messages / result.seconds)
              } msgs/s`,
            );
          }
        } finally {
          for (const [, child] of live) child.kill();
        }
      }
      const rates = new Map<VariantKey, number[]>();
      for (const [variant, list] of results) {
        const r = list.map((x) => x.messages / x.seconds);
        rates.set(variant, r);
        appendRuns.push({ label, variant, rates: r, results: list });
      }
      return rates;
    };
    const med = (rates: Map<VariantKey, number[]>, v: VariantKey) => {
      const r = rates.get(v);
      return r?.length ? median(r) : undefined;
    };
    const rowSpread = (rates: Map<VariantKey, number[]>, vs: VariantKey[]) =>
      Math.max(0, ...vs.map((v) => spread(rates.get(v)) ?? 0)) || undefined;
    const sys = systemInfo.sqlite;
    // Python with a Deno process's idle threads, against plain Python: the runtime's share.
    const threadsRow = (rates: Map<VariantKey, number[]>, version: string): TableRow => ({
      section: "1",
      benchmark: "  Python with 5 idle threads, as a Deno process has",
      oursLabel: `Python+threads ${version}`,
      ours: med(rates, "python-threads"),
      rounds: { ours: rates.get("python-threads"), python: rates.get("python") },
      python: med(rates, "python"),
      spread: rowSpread(rates, ["python-threads", "python"]),
      target: "(diagnostic)",
      result: "-",
    });
    const rounds = (rates: Map<VariantKey, number[]>, v: VariantKey) => ({
      ours: rates.get(v),
      python: rates.get("python"),
      node: rates.get("node"),
    });
    // A row of SessionDB or the bare binding on the system SQLite beside Python and node.
    const peerRow = (
      section: string,
      benchmark: string,
      rates: Map<VariantKey, number[]>,
      v: "sessiondb" | "binding",
      extra: Partial<TableRow> = {},
    ): TableRow => ({
      section,
      benchmark,
      oursLabel: `${v === "sessiondb" ? "SessionDB" : "binding"} ${sys}`,
      ours: med(rates, v),
      rounds: rounds(rates, v),
      python: med(rates, "python"),
      node: med(rates, "node"),
      spread: rowSpread(rates, [v, "python", "node"]),
      target: "(diagnostic)",
      result: "-",
      ...extra,
    });
    const tmpfsRows = (section: string, rates: Map<VariantKey, number[]>): TableRow[] =>
      (["sessiondb", "binding"] as const).map((v) =>
        peerRow(
          section,
          `  tmpfs (CPU only, fsync free)${v === "binding" ? ", bare binding" : ""}`,
          rates,
          v,
        )
      );

    for (const scenario of APPEND_SCENARIOS) {
      const label = `${scenario.mode}/${scenario.sync}`;
      const n = config.appends[label]!;
      const base = { mode: scenario.mode, sync: scenario.sync, batch: 1 };
      if (!scenario.store) {
        const r = await runAppends(label, { ...base, n, warmup: config.warmup, dir: work }, [
          "binding",
          "python",
          "node",
        ]);
        rows.push(
          peerRow("1", `${label}, 1 append/txn (extra*) [appends/s]`, r, "binding", {
            txnPerSec: med(r, "binding"),
            target: "(info)",
          }),
        );
        continue;
      }
      const r = await runAppends(label, { ...base, n, warmup: config.warmup, dir: work }, [
        "sessiondb",
        "python",
        "node",
        "sessiondb-fixed",
        "python-fixed",
        "binding",
        "python-threads",
        "python-control",
      ]);
      rows.push(peerRow("1", `${label}, 1 append/txn [appends/s]`, r, "sessiondb", {
        txnPerSec: med(r, "sessiondb"),
        target: "Py >= 1.0, node >= 0.9",
        result: verdict([
          ["Py", pairRatio(r.get("sessiondb"), r.get("python")), 1.0],
          ["node", pairRatio(r.get("sessiondb"), r.get("node")), 0.9],
        ]),
      }));
      if (fixedPresent) {
        const fixed = med(r, "sessiondb-fixed");
        rows.push({
          section: "1",
          benchmark: "  same, SessionDB on node's SQLite version",
          oursLabel: `SessionDB ${fixedInfo?.sqlite}`,
          ours: fixed,
          rounds: {
            ours: r.get("sessiondb-fixed"),
            python: r.get("python-fixed"),
            node: r.get("node"),
          },
          python: med(r, "python-fixed"),
          node: med(r, "node"),
          spread: rowSpread(r, ["sessiondb-fixed", "python-fixed", "node"]),
          txnPerSec: fixed,
          target: "Py >= 1.0, node >= 0.9",
          result: verdict([
            ["Py", pairRatio(r.get("sessiondb-fixed"), r.get("python-fixed")), 1.0],
            ["node", pairRatio(r.get("sessiondb-fixed"), r.get("node")), 0.9],
          ]),
        });
      }
      rows.push(
        peerRow("1", "  same SQL on the bare binding", r, "binding", {
          txnPerSec: med(r, "binding"),
        }),
      );
      rows.push(threadsRow(r, sys));
      rows.push({
        ...threadsRow(r, sys),
        benchmark: "  Python against itself (A/A control: the resolution)",
        oursLabel: `Python ${sys}`,
        ours: med(r, "python-control"),
        rounds: { ours: r.get("python-control"), python: r.get("python") },
        spread: rowSpread(r, ["python-control", "python"]),
      });
      if (shm) {
        const t = await runAppends(
          `${label} tmpfs`,
          { ...base, n: config.tmpfsAppends[scenario.mode], warmup: config.warmup * 5, dir: shm },
          ["sessiondb", "python", "node", "binding", "python-threads"],
        );
        rows.push(...tmpfsRows("1", t));
        rows.push({ ...threadsRow(t, sys), benchmark: "  tmpfs, Python with 5 idle threads" });
      }
    }

    // 3. Batch appends.
    sampleFsync();
    for (const mode of ["delete", "wal"] as const) {
      const sync: Sync = mode === "wal" ? "FULL" : "EXTRA";
      const label = `${mode}/${sync} x${config.batchSize}`;
      const base = { mode, sync, batch: config.batchSize, warmup: config.batchWarmup };
      const r = await runAppends(label, { ...base, n: config.batches[mode], dir: work }, [
        "sessiondb",
        "python",
        "node",
        "binding",
      ]);
      const ours = med(r, "sessiondb");
      rows.push(
        peerRow("3", `${mode}/${sync}, ${config.batchSize} msgs/txn [msgs/s]`, r, "sessiondb", {
          txnPerSec: ours === undefined ? undefined : ours / config.batchSize,
          target: "(info)",
        }),
        peerRow("3", "  same SQL on the bare binding", r, "binding"),
      );
      if (shm) {
        const t = await runAppends(
          `${label} tmpfs`,
          { ...base, n: config.tmpfsBatches, dir: shm },
          ["sessiondb", "python", "node", "binding"],
        );
        rows.push(...tmpfsRows("3", t));
      }
    }

    sampleFsync();
    const fsync = median(fsyncSamples);
    for (const row of rows) {
      if (row.txnPerSec !== undefined) row.fsyncsPerTxn = fsync / row.txnPerSec;
    }
    rows.push({
      section: "1",
      benchmark: "fsync: 1-byte write + fsync loop [fsyncs/s]",
      oursLabel: "disk",
      ours: fsync,
      spread: spread(fsyncSamples),
      fsyncsPerTxn: 1,
      target: "(physical bound)",
      result: "-",
    });
    // The issue's order: durable appends (and their fsync bound), statements, batches.
    rows.sort((a, b) => a.section.localeCompare(b.section));

    // 4. The suite's wall times, the crash tiers' rates, the writer child's memory.
    const suiteRows: SuiteRow[] = [];
    let suiteDetails: Record<string, unknown> = { skipped: !suite };
    if (suite) {
      const walls = await suiteWallTimes(work, log);
      suiteRows.push(...walls.rows);
      suiteDetails = { skipped: false, ...walls };
      delete suiteDetails.rows;
    }
    const tiers = await crashTiers(work, fixedPresent, log);
    suiteRows.push(...tiers.rows);
    const writerRuns: { vmHwmKiB: number; appends: number; seconds: number }[] = [];
    for (let round = 0; round < config.rounds; round++) {
      log(`writer child peak RSS, round ${round + 1}/${config.rounds}`);
      const dir = await Deno.makeTempDir({ dir: work, prefix: "writer-" });
      writerRuns.push(await writerPeakRss(dir, quick ? 1000 : 3000));
    }
    const peakMiB = median(writerRuns.map((r) => r.vmHwmKiB / 1024));
    suiteRows.push({
      benchmark: "writer child (cells/_prefix_writer.ts, reference target) peak RSS",
      value: peakMiB,
      unit: "MiB",
      target: "< 80 MB",
      result: below(peakMiB * 1.048576, 80),
      detail: `VmHWM before SIGKILL, median of ${writerRuns.length}; ${
        Math.round(median(writerRuns.map((r) => r.appends / r.seconds)))
      } appends/s while measured`,
    });

    for (const line of header) console.log(line);
    console.log("");
    printTable(rows);
    // CPU per message: the part of an append the disk does not explain.
    const cpuPerMessageUs: Record<string, Record<string, number>> = {};
    for (const run of appendRuns) {
      const cpu = run.results.filter((r) => r.cpuSeconds !== undefined).map((r) =>
        r.cpuSeconds! / r.messages * 1e6
      );
      if (cpu.length) (cpuPerMessageUs[run.label] ??= {})[run.variant] = median(cpu);
    }
    console.log("");
    console.log("CPU per message [µs, user + system of the appending process, median]:");
    for (const [label, byVariant] of Object.entries(cpuPerMessageUs)) {
      console.log(
        `  ${label.padEnd(24)} ${
          Object.entries(byVariant).map(([v, us]) => `${v} ${us.toFixed(1)}`).join(", ")
        }`,
      );
    }
    console.log("");
    printSuiteTable(suiteRows);
    const seconds = (performance.now() - began) / 1000;
    const notes = [
      `ours: §2 the FFI binding on SQLite ${bindingInfo.sqlite} vs node:sqlite ${nodeInfo.sqlite}, ` +
      "same SQL, objects per row on both sides.",
      `§1 and §3: SessionDB on the system SQLite ${sys}, the library Python uses; node:sqlite runs ` +
      `its own ${nodeInfo.sqlite}. Every implementation runs the store's statements and ` +
      "pragmas on the store's schema: BEGIN IMMEDIATE; SELECT end_reason (x100: the whole session row); INSERT INTO messages; " +
      "UPDATE sessions SET message_count; COMMIT.",
      "* SessionDB has no option for the synchronous level (FULL in WAL and EXTRA in DELETE " +
      "are fixed), so the extra rows run the store's SQL on the bare binding.",
      `WAL on ${sys}: the store keeps a new file in DELETE (WAL-reset gate), so the bench ` +
      "puts the empty file in WAL with the same library before SessionDB opens it.",
      `ours/Py, ours/node: the median of the per-round ratios; in a round every ` +
      `implementation runs at once, each idle but for its turn, and they take ${config.slices} ` +
      "turns each in rotating order, so the disk's drift within a round hits them alike. " +
      `Diagnostics of the same rounds: Python on ${fixedInfo?.sqlite ?? "the fixed build"} ` +
      "(LD_PRELOAD) beside SessionDB on it; Python with 5 idle threads (a Deno process's " +
      "count besides its main thread: every fd syscall then pays for a shared file table); " +
      "Python against itself (A/A): how far from 1.00x the method reads when nothing differs. " +
      "spread: (max - min) / median of the rounds, the largest in the row. fsync/txn: the " +
      "disk's fsync rate (median of 3 samples) / the commit rate: fsync-equivalents per commit.",
      "tmpfs rows: the same runs on /dev/shm, where fsync is free: what is left is CPU.",
      "§4: wall times of child processes (start-up included), one run each; the sweep runs " +
      "the default leg with 20 sampled sequences, the power-loss tier 2 runs per cell; " +
      `${suite ? "" : "--no-suite: deno test and the matrix were not run. "}` +
      "Targets are benchmarks, never timed tests.",
    ];
    console.log("");
    for (const note of notes) console.log(note);

    const report = {
      date: new Date().toISOString(),
      quick,
      seconds,
      deno: Deno.version,
      os: `${Deno.build.os}/${Deno.build.arch}`,
      cpu,
      sqlite: {
        binding: bindingInfo,
        system: systemInfo,
        fixedBuild: fixedInfo ?? null,
        node: nodeInfo,
        python: pythonInfo ?? null,
      },
      config,
      fsyncPerSec: fsync,
      fsyncSamples,
      cpuPerMessageUs,
      statements: stmtRuns,
      appends: appendRuns,
      table: rows.map((r) => ({
        ...r,
        oursPerPython: rowRatio(r, "python") ?? null,
        oursPerNode: rowRatio(r, "node") ?? null,
      })),
      notes,
      suite: {
        table: suiteRows,
        ...suiteDetails,
        sweepExit: tiers.sweepExit,
        powerlossExit: tiers.powerExit,
        writer: writerRuns,
      },
    };
    await Deno.mkdir(dirname(json), { recursive: true });
    await Deno.writeTextFile(json, JSON.stringify(report, null, 2) + "\n");
    console.log(`\nwrote ${json} (${seconds.toFixed(0)} s)`);
  } finally {
    await Deno.remove(work, { recursive: true }).catch(() => {});
    if (shm) await denoChild({ kind: "tmpfs", action: "remove", path: shm }, undefined);
  }
}

if (import.meta.main) {
  if (Deno.args[0] === "--worker") {
    const job = JSON.parse(Deno.args[1] ?? "{}") as Job;
    console.log(JSON.stringify(runWorker(job)));
  } else {
    await main();
  }
}
