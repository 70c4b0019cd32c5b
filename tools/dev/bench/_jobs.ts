// What the parent asks a child process to do (one JSON argument) and what it answers
// (one JSON line): the contract between the parent and `_worker.ts` / `_python_worker.py`.
import type { Impl, Mode, STORE_SQL, Sync } from "./_config.ts";

/** Statement rates: a prepared INSERT in one transaction, point and 100-row SELECTs. */
export interface StmtJob {
  kind: "stmt";
  impl: "binding" | "node";
  path: string;
  rows: number;
  points: number;
  ranges: number;
}

/** A statement job's rates. */
export interface StmtResult {
  sqlite: string;
  library: string;
  insertPerSec: number;
  pointPerSec: number;
  rangeRowsPerSec: number;
}

/** Appends through one implementation, in slices the parent asks for (`_protocol.ts`). */
export interface AppendJob {
  kind: "append";
  impl: Impl;
  path: string;
  mode: Mode;
  sync: Sync;
  n: number;
  /** How many turns the parent gives this child among its peers. */
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

/** An append job's result. */
export interface AppendResult {
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

/** Which SQLite a child runs, and on what machine. */
export interface InfoResult {
  sqlite: string;
  cpu?: string;
  library?: string;
  python?: string;
}

/** Every job a Deno child runs. */
export type Job =
  | StmtJob
  | AppendJob
  | { kind: "info"; impl: "binding" | "node" }
  | { kind: "tmpfs"; action: "create" | "remove"; path?: string }
  | { kind: "proc"; pid: number };

/** The prefix of the bench's scratch folders on tmpfs (the only ones a child removes). */
export const TMPFS_PREFIX = "/dev/shm/session-db-bench-";
