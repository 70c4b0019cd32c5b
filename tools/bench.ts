/**
 * Performance bench of the FFI SQLite binding and of `SessionDB`, against
 * `node:sqlite` (Deno's built-in, on its bundled SQLite) and Python's `sqlite3`.
 *
 * 1. Statement rates: the binding vs `node:sqlite`, same SQL (prepared INSERT of
 *    100k rows in one transaction, point SELECT by rowid, 100-row SELECT).
 * 2. Durable appends, one transaction per append, per journal mode: `SessionDB`
 *    vs Python `sqlite3` on the same library vs `node:sqlite`, all running the
 *    store's statements and pragmas.
 * 3. Batch appends (100 messages per `appendMessages` transaction).
 * 4. The disk's fsync rate, the physical bound of a durable commit.
 *
 * Every measurement runs in a child process (this file with `--worker`, or
 * `tools/_bench_python.py`), so that one process never opens a database file with
 * two different SQLite copies; rounds alternate between implementations and the
 * median is reported.
 *
 * Usage: `deno task bench [--quick] [--json <path>]`. Writes `.cache/bench/bench.json`
 * unless `--json` names another path.
 *
 * @module
 */

import { DatabaseSync } from "node:sqlite";
import { fileURLToPath } from "node:url";
import { dirname, join, resolve } from "node:path";
import { Database, sqliteLibraryPath, sqliteVersion } from "../session_db/sqlite/database.ts";
import { SessionDB } from "../session_db/session_db.ts";
import { MIGRATIONS } from "../session_db/_schema.ts";
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
  rounds: number;
  stmtRows: number;
  stmtPoints: number;
  stmtRanges: number;
  appends: Record<string, number>;
  batches: Record<Mode, number>;
  batchSize: number;
  fsyncMs: number;
}

const FULL_CONFIG: Config = {
  rounds: 3,
  stmtRows: 100_000,
  stmtPoints: 100_000,
  stmtRanges: 2_000,
  appends: { "delete/EXTRA": 1500, "wal/FULL": 3000, "wal/NORMAL": 3000, "delete/FULL": 1500 },
  batches: { delete: 60, wal: 100 },
  batchSize: 100,
  fsyncMs: 1000,
};

const QUICK_CONFIG: Config = {
  rounds: 1,
  stmtRows: 20_000,
  stmtPoints: 20_000,
  stmtRanges: 400,
  appends: { "delete/EXTRA": 300, "wal/FULL": 600, "wal/NORMAL": 600, "delete/FULL": 300 },
  batches: { delete: 15, wal: 25 },
  batchSize: 100,
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
}\nINSERT INTO schema_version (version) VALUES (${MIGRATIONS.length});\nCOMMIT;`;
const SESSION_ID = "bench-session";
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
  batch: number;
  warmup: number;
  content: string;
  sessionId: string;
  schema: string;
  sql: typeof STORE_SQL;
}

interface AppendResult {
  seconds: number;
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

type Job = StmtJob | AppendJob | { kind: "info"; impl: "binding" | "node" };

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

/** Times `step(i)` for `n` transactions after `warmup` untimed ones. */
function timed(job: AppendJob, step: (i: number) => void): number {
  for (let i = 0; i < job.warmup; i++) step(i);
  const started = performance.now();
  for (let i = job.warmup; i < job.warmup + job.n; i++) step(i);
  return (performance.now() - started) / 1000;
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
    const select = db.prepare(sql.selectSession);
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
    const select = db.prepare(sql.selectSession);
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
  if (job.kind === "stmt") return job.impl === "binding" ? stmtBinding(job) : stmtNode(job);
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

// --- the parent --------------------------------------------------------------------

/** Which SQLite the binding loads in a child: the fixed build, or the system library. */
type Lib = "fixed" | "system";

function childEnv(lib: Lib | undefined): Record<string, string> {
  const env = Deno.env.toObject();
  for (const name of ["DENO_SQLITE_PATH", "SESSION_DB_CRASH_AT", "SESSION_DB_JOURNAL_MODE"]) {
    delete env[name];
  }
  if (lib === "fixed") env.DENO_SQLITE_PATH = fixedSqlitePath();
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

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
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
      file.syncSync();
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

function fileExists(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
}

function parseArgs(args: string[]): { quick: boolean; json: string } {
  let quick = false;
  let json = DEFAULT_JSON;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--quick") quick = true;
    else if (arg === "--json") {
      const value = args[++i];
      if (!value) throw new Error("--json needs a path: deno task bench --json out.json");
      json = resolve(value);
    } else if (arg.startsWith("--json=")) json = resolve(arg.slice("--json=".length));
    else {
      throw new Error(`Unknown argument "${arg}": use --quick and/or --json <path>`);
    }
  }
  return { quick, json };
}

const fmt = (value: number | undefined): string =>
  value === undefined || !Number.isFinite(value) ? "-" : Math.round(value).toLocaleString("en-US");
const ratio = (a: number | undefined, b: number | undefined): number | undefined =>
  a === undefined || b === undefined || b === 0 ? undefined : a / b;
const fmtRatio = (r: number | undefined): string => (r === undefined ? "-" : `${r.toFixed(2)}x`);

interface TableRow {
  section: string;
  benchmark: string;
  ours?: number;
  oursLabel: string;
  python?: number;
  node?: number;
  target: string;
  pass?: boolean;
  fsyncsPerTxn?: number;
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
    fmtRatio(ratio(r.ours, r.python)),
    fmtRatio(ratio(r.ours, r.node)),
    r.fsyncsPerTxn === undefined ? "-" : r.fsyncsPerTxn.toFixed(1),
    r.target,
    r.pass === undefined ? "-" : r.pass ? "PASS" : "FAIL",
  ]);
  const numeric = new Set([3, 4, 5, 6, 7, 8]);
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

async function main(): Promise<void> {
  const { quick, json } = parseArgs(Deno.args);
  const config = quick ? QUICK_CONFIG : FULL_CONFIG;
  const log = (line: string) => console.error(`bench: ${line}`);
  const began = performance.now();
  await Deno.mkdir(BENCH_DIR, { recursive: true });
  const work = await Deno.makeTempDir({ dir: BENCH_DIR, prefix: "run-" });
  let seq = 0;
  const dbPath = (tag: string) =>
    join(work, `${String(++seq).padStart(3, "0")}-${tag.replace(/[^\w.-]+/g, "_")}.db`);

  try {
    // Versions, from children (this process opens no database).
    const fixedPresent = fileExists(fixedSqlitePath());
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
      log(`python3 unavailable, its column is empty: ${(error as Error).message}`);
    }
    const bindingInfo = fixedInfo ?? systemInfo;

    console.log("SessionDB / SQLite binding bench" + (quick ? " (--quick)" : ""));
    console.log(`date:     ${new Date().toISOString()}`);
    console.log(
      `deno:     ${Deno.version.deno} (v8 ${Deno.version.v8}, ${Deno.build.os}/${Deno.build.arch})`,
    );
    const cpu = nodeInfo.cpu ?? cpuModel();
    console.log(`cpu:      ${cpu}`);
    console.log(
      `sqlite:   binding ${bindingInfo.sqlite} (${
        fixedPresent ? "fixed build" : "system; fixed build missing, run deno task sqlite"
      }: ${bindingInfo.library}); system ${systemInfo.sqlite} (${systemInfo.library}); ` +
        `node:sqlite ${nodeInfo.sqlite} (bundled); Python ${pythonInfo?.python ?? "n/a"} ` +
        `sqlite3 ${pythonInfo?.sqlite ?? "n/a"}`,
    );
    console.log(
      `settings: ${config.rounds} round(s) per measurement, median; rounds alternate implementations`,
    );
    console.log("");

    const rows: TableRow[] = [];

    // 4. fsync rate (first, on a quiet disk).
    log("fsync rate");
    const fsync = fsyncRate(work, config.fsyncMs);

    // 1. Statement rates.
    const stmtRuns: Record<"binding" | "node", StmtResult[]> = { binding: [], node: [] };
    for (let round = 0; round < config.rounds; round++) {
      for (const impl of rotated(["binding", "node"] as const, round)) {
        log(`statements round ${round + 1}/${config.rounds}: ${impl}`);
        const job: StmtJob = {
          kind: "stmt",
          impl,
          path: dbPath(`stmt-${impl}`),
          rows: config.stmtRows,
          points: config.stmtPoints,
          ranges: config.stmtRanges,
        };
        stmtRuns[impl].push(
          await denoChild(job, impl === "binding" ? bindingLib : undefined) as StmtResult,
        );
      }
    }
    const stmtMedian = (impl: "binding" | "node", key: keyof StmtResult) =>
      median(stmtRuns[impl].map((r) => r[key] as number));
    const kRows = (n: number) => `${n / 1000}k`;
    const stmtRows: [string, keyof StmtResult][] = [
      [`INSERT ${kRows(config.stmtRows)} rows, 1 txn [rows/s]`, "insertPerSec"],
      [`point SELECT by rowid x${kRows(config.stmtPoints)} [ops/s]`, "pointPerSec"],
      [`100-row SELECT x${kRows(config.stmtRanges)} [rows/s]`, "rangeRowsPerSec"],
    ];
    for (const [benchmark, key] of stmtRows) {
      const ours = stmtMedian("binding", key);
      const node = stmtMedian("node", key);
      rows.push({
        section: "1",
        benchmark,
        oursLabel: `binding ${bindingInfo.sqlite}`,
        ours,
        node,
        target: "ours/node >= 0.8",
        pass: ours / node >= 0.8,
      });
    }

    // 2. Durable appends, one transaction per append.
    const appendRuns: {
      scenario: string;
      impl: Impl;
      rates: number[];
      results: AppendResult[];
    }[] = [];
    const runAppends = async (
      scenario: { mode: Mode; sync: Sync },
      impls: Impl[],
      n: number,
      batch: number,
      label: string,
    ) => {
      const byImpl = new Map<Impl, AppendResult[]>(impls.map((i) => [i, []]));
      for (let round = 0; round < config.rounds; round++) {
        for (const impl of rotated(impls, round)) {
          if (impl === "python" && !pythonInfo) continue;
          const job: AppendJob = {
            kind: "append",
            impl,
            path: dbPath(`${label}-${impl}`),
            mode: scenario.mode,
            sync: scenario.sync,
            n,
            batch,
            warmup: Math.min(batch === 1 ? 100 : 5, Math.ceil(n / 10)),
            content: CONTENT,
            sessionId: SESSION_ID,
            schema: SCHEMA_SCRIPT,
            sql: STORE_SQL,
          };
          const result = (impl === "python"
            ? await pythonChild(job)
            : await denoChild(job, impl === "node" ? undefined : "system")) as AppendResult;
          if (result.journalMode !== scenario.mode || result.synchronous !== scenario.sync) {
            throw new Error(
              `${impl} ran ${result.journalMode}/${result.synchronous}, not ${scenario.mode}/${scenario.sync}`,
            );
          }
          byImpl.get(impl)!.push(result);
          log(
            `${label} round ${round + 1}/${config.rounds}: ${impl} ${
              fmt(result.messages / result.seconds)
            } msgs/s`,
          );
        }
      }
      const rate = (impl: Impl) => {
        const results = byImpl.get(impl) ?? [];
        if (!results.length) return undefined;
        const rates = results.map((r) => r.messages / r.seconds);
        appendRuns.push({ scenario: label, impl, rates, results });
        return median(rates);
      };
      return {
        sessiondb: rate("sessiondb"),
        binding: rate("binding"),
        python: rate("python"),
        node: rate("node"),
      };
    };

    for (const scenario of APPEND_SCENARIOS) {
      const label = `${scenario.mode}/${scenario.sync}`;
      const impls: Impl[] = scenario.store
        ? ["sessiondb", "python", "node", "binding"]
        : ["binding", "python", "node"];
      const r = await runAppends(scenario, impls, config.appends[label]!, 1, label);
      if (scenario.store) {
        const pass = (r.sessiondb ?? 0) >= (r.python ?? Infinity) * 1.0 &&
          (r.sessiondb ?? 0) >= (r.node ?? Infinity) * 0.9;
        rows.push({
          section: "2",
          benchmark: `${label}, 1 append/txn [appends/s]`,
          oursLabel: `SessionDB ${systemInfo.sqlite}`,
          ours: r.sessiondb,
          python: r.python,
          node: r.node,
          fsyncsPerTxn: r.sessiondb ? fsync / r.sessiondb : undefined,
          target: "Py >= 1.0, node >= 0.9",
          pass: pythonInfo ? pass : undefined,
        } as TableRow);
        rows.push({
          section: "2",
          benchmark: `  same SQL on the bare binding`,
          oursLabel: `binding ${systemInfo.sqlite}`,
          ours: r.binding,
          python: r.python,
          node: r.node,
          fsyncsPerTxn: r.binding ? fsync / r.binding : undefined,
          target: "(diagnostic)",
        } as TableRow);
      } else {
        rows.push({
          section: "2",
          benchmark: `${label}, 1 append/txn [appends/s] (extra*)`,
          oursLabel: `binding ${systemInfo.sqlite}`,
          ours: r.binding,
          python: r.python,
          node: r.node,
          fsyncsPerTxn: r.binding ? fsync / r.binding : undefined,
          target: "(info)",
        } as TableRow);
      }
    }

    // 3. Batch appends.
    for (const mode of ["delete", "wal"] as const) {
      const sync: Sync = mode === "wal" ? "FULL" : "EXTRA";
      const label = `${mode}/${sync} batch`;
      const r = await runAppends(
        { mode, sync },
        ["sessiondb", "python", "node"],
        config.batches[mode],
        config.batchSize,
        label,
      );
      rows.push({
        section: "3",
        benchmark: `${mode}/${sync}, ${config.batchSize} msgs/txn [msgs/s]`,
        oursLabel: `SessionDB ${systemInfo.sqlite}`,
        ours: r.sessiondb,
        python: r.python,
        node: r.node,
        fsyncsPerTxn: r.sessiondb ? fsync / (r.sessiondb / config.batchSize) : undefined,
        target: "(info)",
      } as TableRow);
    }

    rows.push({
      section: "4",
      benchmark: "fsync: 1-byte write + fsync [fsyncs/s]",
      oursLabel: "disk",
      ours: fsync,
      fsyncsPerTxn: 1,
      target: "(physical bound)",
    });

    printTable(rows);
    const seconds = (performance.now() - began) / 1000;
    console.log("");
    console.log(
      `ours: §1 the FFI binding on SQLite ${bindingInfo.sqlite} vs node:sqlite ${nodeInfo.sqlite}; ` +
        `§2-3 SessionDB on the system SQLite ${systemInfo.sqlite} (same library as Python) vs ` +
        `node:sqlite ${nodeInfo.sqlite}.`,
    );
    console.log(
      "All append implementations run the store's statements: BEGIN IMMEDIATE; SELECT session; " +
        "INSERT INTO messages; UPDATE sessions SET message_count; COMMIT (store schema and pragmas).",
    );
    console.log(
      "* SessionDB has no option for the synchronous level (FULL in WAL, EXTRA in DELETE are " +
        "fixed), so extra rows show the bare binding running the store's SQL.",
    );
    console.log(
      `fsync/txn: the disk's fsync rate divided by the transaction rate (fsync-equivalents per commit). ` +
        `WAL on ${systemInfo.sqlite}: the file is put in WAL before SessionDB opens it (WAL-reset gate).`,
    );

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
      statements: stmtRuns,
      appends: appendRuns,
      table: rows.map((r) => ({
        ...r,
        oursPerPython: ratio(r.ours, r.python) ?? null,
        oursPerNode: ratio(r.ours, r.node) ?? null,
      })),
    };
    await Deno.mkdir(dirname(json), { recursive: true });
    await Deno.writeTextFile(json, JSON.stringify(report, null, 2) + "\n");
    console.log(`\nwrote ${json} (${seconds.toFixed(0)} s)`);
  } finally {
    await Deno.remove(work, { recursive: true }).catch(() => {});
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
