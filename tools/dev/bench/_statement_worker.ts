// The statement-rate body of a Deno child: the same SQL through the FFI binding and
// through node:sqlite (a prepared INSERT of many rows in one transaction, point SELECTs
// by rowid, 100-row SELECTs), after a short warm-up on a table of its own.
import { DatabaseSync } from "node:sqlite";
import { Database, sqliteLibraryPath, sqliteVersion } from "../../../session_db/sqlite/database.ts";
import type { StmtJob, StmtResult } from "./_jobs.ts";

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

/**
 * What a phase calls, met by the binding's `Database` and node:sqlite's `DatabaseSync`
 * alike: each child passes its own connection, so every call site sees one class.
 */
interface Connection {
  exec(sql: string): unknown;
  prepare(sql: string): {
    run(a: number, b: string, c: number): unknown;
    get(id: number): unknown;
    all(id: number): unknown[];
  };
}

interface Phase {
  insertMs: number;
  pointMs: number;
  rangeMs: number;
  rangeRows: number;
}

function phase(db: Connection, table: string, rows: number, points: number, ranges: number): Phase {
  db.exec(
    `CREATE TABLE ${table} (id INTEGER PRIMARY KEY, a INTEGER NOT NULL, b TEXT NOT NULL, c REAL NOT NULL)`,
  );
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
    sum += Number((point.get(ids[i]!) as { a: number | bigint } | undefined)?.a ?? 0);
  }
  const pointMs = performance.now() - t;

  const range = db.prepare(`SELECT id, a, b, c FROM ${table} WHERE id >= ? ORDER BY id LIMIT 100`);
  const starts = keys(ranges, rows - 100, 11);
  let count = 0;
  t = performance.now();
  for (let i = 0; i < ranges; i++) count += range.all(starts[i]!).length;
  const rangeMs = performance.now() - t;
  if (sum <= 0 || count !== ranges * 100) throw new Error("wrong results");
  return { insertMs, pointMs, rangeMs, rangeRows: count };
}

function rates(db: Connection, job: StmtJob): Omit<StmtResult, "sqlite" | "library"> {
  db.exec("PRAGMA journal_mode = WAL");
  db.exec("PRAGMA synchronous = NORMAL");
  phase(db, "warm", 5000, 5000, 100);
  const r = phase(db, "t", job.rows, job.points, job.ranges);
  return {
    insertPerSec: job.rows / (r.insertMs / 1000),
    pointPerSec: job.points / (r.pointMs / 1000),
    rangeRowsPerSec: r.rangeRows / (r.rangeMs / 1000),
  };
}

/** Runs a statement job on the binding or on node:sqlite. */
export function runStatements(job: StmtJob): StmtResult {
  const binding = job.impl === "binding";
  const db = binding ? new Database(job.path) : new DatabaseSync(job.path);
  try {
    const result = rates(db, job);
    if (binding) return { ...result, sqlite: sqliteVersion(), library: sqliteLibraryPath() };
    const version = db.prepare("SELECT sqlite_version() AS v").get() as { v: string };
    return { ...result, sqlite: version.v, library: "bundled in deno" };
  } catch (error) {
    throw new Error(`${binding ? "binding" : "node:sqlite"}: ${(error as Error).message}`, {
      cause: error,
    });
  } finally {
    db.close();
  }
}
