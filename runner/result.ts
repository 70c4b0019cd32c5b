/**
 * The engine's result vocabulary: every tier (the cells on a leg × library, the crash
 * sweep over named points and file-system calls, the power-loss cells) returns these
 * typed values, and every tool prints or writes them; no layer reads another's printed
 * output.
 *
 * @example
 * ```ts
 * import type { Outcome, TierOutcome } from "./result.ts";
 * const pass: Outcome = {
 *   clause: "1 prefix durability",
 *   cell: 1,
 *   tier: "cells",
 *   leg: "default",
 *   library: "system",
 *   status: "PASS",
 *   judged: 12,
 * };
 * const tier: TierOutcome = { run: { tier: "cells", status: "RAN", seconds: 3 }, results: [pass] };
 * console.log(tier.results.length); // 1
 * ```
 *
 * @module
 */
import type { Diagnosis, SkipKind, Status, StoreEngine } from "../cells/engine/report.ts";

/**
 * The tiers, in the order they run.
 *
 * @example
 * ```ts
 * import { TIERS } from "./result.ts";
 * console.log(TIERS[0]); // "cells"
 * ```
 */
export const TIERS = [
  "cells",
  "sweep",
  "syscalls-crash",
  "syscalls-power-loss",
  "powerloss-cells",
  "faults",
] as const;

/**
 * A tier's name.
 *
 * @example
 * ```ts
 * import type { TierName } from "./result.ts";
 * const tier: TierName = "powerloss-cells";
 * ```
 */
export type TierName = typeof TIERS[number];

/**
 * One clause on one tier × leg × library: what was observed, why, and where to look.
 * A result that judged nothing (no state, program or kill) is never `PASS`.
 *
 * @example
 * ```ts
 * import type { Outcome } from "./result.ts";
 * const lost: Outcome = {
 *   clause: "1 prefix durability",
 *   cell: 1,
 *   tier: "cells",
 *   leg: "delete",
 *   library: "own",
 *   status: "FAIL",
 *   checks: ["prefix: acknowledged m7 is missing"],
 *   replay: "deno task matrix --target my_target.ts --cells 1 --legs delete --seed 7",
 * };
 * ```
 */
export interface Outcome {
  /** The clause, e.g. `1 prefix durability`, or `crash points` for the sweep. */
  clause: string;
  /** The cell number whose clause it is, when there is one. */
  cell?: number;
  /** The tier. */
  tier: TierName;
  /** The journal-mode leg (`default`, `delete`, `wal`). */
  leg: string;
  /**
   * The SQLite library label (`system`, `fixed`), or `own` for a store that brings its
   * own SQLite, or `none` for a store on no SQLite: no library axis for those two.
   */
  library: string;
  /** What the store really ran on, from the evidence. */
  engine?: StoreEngine;
  /** The SQLite version it ran, when known. */
  sqliteVersion?: string;
  /** PASS, FAIL, SKIP, or ERROR (the suite failed, not the store). */
  status: Status;
  /** Why it failed, erred or was skipped: the whole text (tables shorten it). */
  reason?: string;
  /** A SKIP's kind, when a reader acts on it (the reason is for people, never parsed). */
  skipKind?: SkipKind;
  /** The failed checks, one line each. */
  checks?: string[];
  /** Known failure patterns recognised in the failed checks, with cause and fix. */
  diagnoses?: Diagnosis[];
  /** Where the evidence was kept. */
  evidence?: string;
  /** The seed of its random choices. */
  seed?: number;
  /** The command that replays it. */
  replay?: string;
  /** Wall time, when measured per result. */
  seconds?: number;
  /** How many states, programs or kills were judged (0 is never a PASS). */
  judged?: number;
  /** The evidence figures (counts, timings, observations). */
  figures?: Record<string, unknown>;
  /** The repetition it came from (from 1), when the tier ran more than once (`--repeat`). */
  run?: number;
}

/**
 * How a tier went as a whole.
 *
 * @example
 * ```ts
 * import type { TierRun } from "./result.ts";
 * const run: TierRun = { tier: "sweep", status: "SKIP", reason: "no crash points", seconds: 0 };
 * ```
 */
export interface TierRun {
  /** The tier. */
  tier: TierName;
  /** `RAN`, or `SKIP` when it does not apply or cannot run here (with the reason). */
  status: "RAN" | "SKIP";
  /** Why it was skipped. */
  reason?: string;
  /** The SKIP's kind, when a reader acts on it (the reason is for people, never parsed). */
  skipKind?: SkipKind;
  /** Wall time. */
  seconds: number;
}

/**
 * A tier's outcome: how it went and its results.
 *
 * @example
 * ```ts
 * import type { TierOutcome } from "./result.ts";
 * const none: TierOutcome = { run: { tier: "cells", status: "RAN", seconds: 1 }, results: [] };
 * ```
 */
export interface TierOutcome {
  /** How the tier went. */
  run: TierRun;
  /** Its results. */
  results: Outcome[];
}
