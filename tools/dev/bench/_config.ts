// The bench's settings: where it writes, how long each measurement runs (full and
// --quick), the append scenarios, and the store's own SQL that the replicas run.
import { fileURLToPath } from "node:url";
import { join, resolve } from "node:path";
import { MIGRATIONS, STORE_SCHEMA_VERSION } from "../../../session_db/schema.ts";
import { APPEND_SQL } from "../../../session_db/statements.ts";

/** The project's root folder (children run there). */
export const ROOT: string = resolve(fileURLToPath(new URL("../../../", import.meta.url)));
/** The Deno children's entry (`_worker.ts <job as JSON>`). */
export const WORKER_SCRIPT: string = fileURLToPath(new URL("./_worker.ts", import.meta.url));
/** The Python children's entry (`_python_worker.py <job as JSON>`). */
export const PYTHON_SCRIPT: string = fileURLToPath(
  new URL("./_python_worker.py", import.meta.url),
);
/** Where the bench works and writes its report. */
export const BENCH_DIR: string = join(ROOT, ".cache", "bench");
/** The JSON report unless `--json` names another path. */
export const DEFAULT_JSON: string = join(BENCH_DIR, "bench.json");

/** A journal mode the bench runs. */
export type Mode = "wal" | "delete";
/** A `synchronous` level the bench runs. */
export type Sync = "EXTRA" | "FULL" | "NORMAL";
/** An implementation that appends. */
export type Impl = "sessiondb" | "binding" | "python" | "node";

/** How long each measurement runs. */
export interface Config {
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
  /** Appends, then 100-message batches, first run on a scratch file (see `AppendJob`). */
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

/** The full run (about 5 minutes). */
export const FULL_CONFIG: Readonly<Config> = {
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

/** `--quick`: a one-round smoke run. */
export const QUICK_CONFIG: Readonly<Config> = {
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
export const APPEND_SCENARIOS: readonly { mode: Mode; sync: Sync; store: boolean }[] = [
  { mode: "delete", sync: "EXTRA", store: true },
  { mode: "wal", sync: "FULL", store: true },
  { mode: "wal", sync: "NORMAL", store: false },
  { mode: "delete", sync: "FULL", store: false },
];

/** The store's statements, as the replicas run them: the store's own (session_db/statements.ts). */
export const STORE_SQL = APPEND_SQL;

/** The store's schema in one transaction, for the replicas. */
export const SCHEMA_SCRIPT: string = `BEGIN IMMEDIATE;\n${
  MIGRATIONS.join("\n")
}\nINSERT INTO schema_version (version) VALUES (${STORE_SCHEMA_VERSION});\nCOMMIT;`;
/** The session every append run writes to. */
export const SESSION_ID = "bench-session";
/** About 200 bytes of message text; each message appends its index. */
export const CONTENT: string = "The quick brown fox jumps over the lazy dog. ".repeat(4) + "#";
