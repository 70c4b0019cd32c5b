/**
 * The conformance report's vocabulary (schema in docs/conformance.md): levels, statuses,
 * results (the engine's {@linkcode Outcome} after the expectations manifest),
 * capabilities and the report itself.
 *
 * @example
 * ```ts
 * import { countStatuses, verdictOf } from "./report_schema.ts";
 * console.log(verdictOf([]), countStatuses([]).PASS); // { verdict: "SKIP", ... } 0
 * ```
 *
 * @module
 */
import type { Status, StoreEngine } from "../cells/engine/report.ts";
import type { Outcome, TierRun } from "./result.ts";

export { TIERS } from "./result.ts";
export type { TierName, TierRun } from "./result.ts";
export type { Status } from "../cells/engine/report.ts";

/**
 * The report's schema name (its version: {@linkcode REPORT_SCHEMA_VERSION}).
 *
 * @example
 * ```ts
 * import { REPORT_SCHEMA } from "./report_schema.ts";
 * const looksLikeOne = (data: { schema?: string }) => data.schema === REPORT_SCHEMA;
 * ```
 */
export const REPORT_SCHEMA = "session-conformance/report";
/**
 * The schema version this code writes and reads (2: ERROR results, a SKIP or ERROR
 * verdict, the store's engine, failed checks and diagnoses); bumped on any incompatible
 * change.
 *
 * @example
 * ```ts
 * import { REPORT_SCHEMA_VERSION } from "./report_schema.ts";
 * console.log(REPORT_SCHEMA_VERSION); // 2
 * ```
 */
export const REPORT_SCHEMA_VERSION = 2;

/**
 * The levels, weakest first.
 *
 * @example
 * ```ts
 * import { LEVELS } from "./report_schema.ts";
 * const atLeast = (level: typeof LEVELS[number], floor: typeof LEVELS[number]) =>
 *   LEVELS.indexOf(level) >= LEVELS.indexOf(floor);
 * ```
 */
export const LEVELS = ["NONE", "BASE", "DURABLE", "FULL", "HARDENED"] as const;

/**
 * A conformance level.
 *
 * @example
 * ```ts
 * import type { Level } from "./report_schema.ts";
 * const required: Level = "DURABLE";
 * ```
 */
export type Level = typeof LEVELS[number];

/**
 * A result's status after the expectations manifest: the observed
 * {@linkcode Status}, refined with `XFAIL` (a failure the manifest expected) and `XPASS`
 * (an expected failure that did not come).
 *
 * @example
 * ```ts
 * import type { ResultStatus } from "./report_schema.ts";
 * const green = (s: ResultStatus) => s === "PASS" || s === "XFAIL";
 * ```
 */
export type ResultStatus = Status | "XFAIL" | "XPASS";

/** The result statuses in table order. */
export const RESULT_STATUSES: readonly ResultStatus[] = [
  "PASS",
  "FAIL",
  "ERROR",
  "SKIP",
  "XFAIL",
  "XPASS",
];

/**
 * What a manifest expects of a result.
 *
 * @example
 * ```ts
 * import type { Expectation } from "./report_schema.ts";
 * const known: Expectation = { expect: "FAIL", reason: "no folder sync after unlink" };
 * ```
 */
export interface Expectation {
  /** `FAIL`: known broken; `INTERMITTENT`: passes or fails (either is accepted). */
  expect: "FAIL" | "INTERMITTENT";
  /** Why, one line. */
  reason: string;
  /** Where it is tracked (an issue, a doc). */
  link?: string;
}

/**
 * One clause on one tier, leg and library (on one machine): the engine's outcome, what
 * it observed, and its status after the expectations manifest.
 *
 * @example
 * ```ts
 * import type { Result } from "./report_schema.ts";
 * const expected: Result = {
 *   clause: "1 prefix durability",
 *   cell: 1,
 *   tier: "syscalls-power-loss",
 *   leg: "default",
 *   library: "own",
 *   observed: "FAIL",
 *   status: "XFAIL",
 *   expectation: { expect: "FAIL", reason: "DELETE without a folder sync" },
 * };
 * ```
 */
export interface Result extends Omit<Outcome, "status"> {
  /** The machine (set by `--merge`, from the report's `machine.id`). */
  machine?: string;
  /** What the tier observed. */
  observed: Status;
  /** The verdict after the expectations: XFAIL, XPASS, or the observed status. */
  status: ResultStatus;
  /** The manifest entry that matched. */
  expectation?: Expectation;
}

/**
 * What the target offers, detected.
 *
 * @example
 * ```ts
 * import type { Capabilities } from "./report_schema.ts";
 * const summary = (c: Capabilities) => `${c.engine.kind}, ${c.crashPoints} crash points`;
 * ```
 */
export interface Capabilities {
  /** Methods of the opened store. */
  methods: string[];
  /** Per cell: whether the store has its methods, and which are missing. */
  cells: Record<string, { available: boolean; missing: string[] }>;
  /** Crash points the target declares (`crashPoints()`). */
  crashPoints: number;
  /** Legs where some cell ran (the store honoured the leg), per library. */
  legsHonoured: string[];
  /** Legs skipped as not honoured or not applicable, with why. */
  legsNotHonoured: { leg: string; library: string; reason: string }[];
  /** Whether the store's file is an SQLite database. */
  sqliteFile: boolean;
  /** Whether the store reaches SQLite through this project's binding (the library mapped). */
  binding: boolean;
  /** What the store runs on: the library axis applies to `binding` only. */
  engine: StoreEngine;
  /** Whether the file-system call recorder can be built here (power loss recordable). */
  recorder: { ok: boolean; reason?: string };
  /**
   * The flags the target's children get beyond the cells' narrow scope (its declared
   * `childPermissions`), e.g. `--allow-sys=cpus`; absent when it declares none.
   */
  childPermissions?: string[];
  /** Why the target cannot run under the cells' scoped children, if it cannot. */
  scopedChildren?: string;
  /**
   * The store's own error when it cannot open and write here with every permission
   * (`openStore threw: Error: …`): a FAIL, never a SKIP.
   */
  openError?: string;
}

/**
 * The machine a report comes from.
 *
 * @example
 * ```ts
 * import type { Machine } from "./report_schema.ts";
 * const here: Machine = { id: "ci", os: Deno.build.os, arch: Deno.build.arch, deno: Deno.version.deno };
 * ```
 */
export interface Machine {
  /** A stable name: `--machine`, else `CONFORMANCE_MACHINE`, else os-arch-hostname. */
  id: string;
  /** `Deno.build.os`. */
  os: string;
  /** `Deno.build.arch`. */
  arch: string;
  /** Deno's version. */
  deno: string;
}

/**
 * The report `deno task conformance` writes (JSON), and `--merge` reads and writes.
 *
 * @example
 * ```ts
 * import type { ConformanceReport } from "./report_schema.ts";
 * const line = (r: ConformanceReport) => `${r.verdict}, level ${r.level}${r.why ? ` (${r.why})` : ""}`;
 * ```
 */
export interface ConformanceReport {
  /** Always {@linkcode REPORT_SCHEMA}. */
  schema: typeof REPORT_SCHEMA;
  /** {@linkcode REPORT_SCHEMA_VERSION}. */
  version: number;
  /** The level reached (the weakest over machines when merged). */
  level: Level;
  /** The next level and what it lacks (absent at FULL). */
  next?: { level: Level; missing: string[] };
  /** The run's one-line verdict ({@linkcode verdictOf}). */
  verdict: Verdict;
  /** Why the verdict is not PASS, one line. */
  why?: string;
  /** The target specifier. */
  target: string;
  /** When it ran (ISO). */
  date: string;
  /** The command line that produced it. */
  command: string;
  /** Whether it ran with `--strict`. */
  strict: boolean;
  /** Whether it ran with `--quick` (short spans). */
  quick: boolean;
  /** The machines: one for a run, several for a merge. */
  machines: Machine[];
  /** Per machine: what the target offers there. */
  capabilities: Record<string, Capabilities>;
  /** The expectations manifest used, if any. */
  expectations?: string;
  /** How each tier went (per machine when merged: the machine is in `machine`). */
  tiers: (TierRun & { machine?: string })[];
  /** Every result. */
  results: Result[];
  /** How many results have each status. */
  counts: Record<ResultStatus, number>;
  /**
   * Processes the run started and left running (killed at its end): each one makes the
   * verdict FAIL.
   */
  survivors?: { pid: number; commandLine: string }[];
}

/**
 * A run's verdict, in the results' one vocabulary ({@linkcode Status}): `FAIL` when a result failed (an XPASS too under strict); `ERROR` when
 * the suite failed somewhere (never a verdict on the store, never a PASS); `SKIP` when
 * nothing was judged (every tier skipped, or every result a SKIP); `PASS` otherwise.
 *
 * @example
 * ```ts
 * import type { Verdict } from "./report_schema.ts";
 * const exitCode = (v: Verdict) => v === "PASS" ? 0 : 1;
 * ```
 */
export type Verdict = Status;

/** Counts the results by status. */
export function countStatuses(results: readonly Result[]): Record<ResultStatus, number> {
  const counts = { PASS: 0, FAIL: 0, ERROR: 0, SKIP: 0, XFAIL: 0, XPASS: 0 };
  for (const r of results) counts[r.status]++;
  return counts;
}

/**
 * Outcomes as results before any manifest: a PASS that judged nothing (no state, program
 * or kill) is a SKIP saying so, never a PASS.
 *
 * @param outcomes The engine's outcomes.
 * @returns The results.
 * @example
 * ```ts
 * import { observedResults } from "./report_schema.ts";
 * const [r] = observedResults([
 *   { clause: "1 c", tier: "sweep", leg: "default", library: "system", status: "PASS", judged: 0 },
 * ]);
 * console.log(r?.status); // "SKIP"
 * ```
 */
export function observedResults(outcomes: readonly Outcome[]): Result[] {
  return outcomes.map((o): Result => {
    const nothing = o.status === "PASS" && o.judged === 0;
    const status = nothing ? "SKIP" : o.status;
    return { ...o, observed: status, status, ...(nothing ? { reason: "nothing was judged" } : {}) };
  });
}

/**
 * The verdict and, unless PASS, why.
 *
 * @param results Every result.
 * @param strict Whether an XPASS fails the run.
 * @param tiers How the tiers went (named when every one was skipped).
 * @returns The verdict.
 * @example
 * ```ts
 * import { verdictOf } from "./report_schema.ts";
 * console.log(verdictOf([]).verdict); // "SKIP": nothing judged is never a PASS
 * ```
 */
export function verdictOf(
  results: readonly Result[],
  strict = false,
  tiers: readonly (TierRun & { machine?: string })[] = [],
): { verdict: Verdict; why?: string } {
  const n = (status: ResultStatus) => results.filter((r) => r.status === status).length;
  if (n("FAIL")) return { verdict: "FAIL", why: `${n("FAIL")} result(s) failed` };
  if (strict && n("XPASS")) {
    return { verdict: "FAIL", why: `${n("XPASS")} expected failure(s) passed (--strict)` };
  }
  if (n("ERROR")) {
    return { verdict: "ERROR", why: `the suite failed on ${n("ERROR")} result(s), not the store` };
  }
  if (!n("PASS") && !n("XPASS") && !n("XFAIL")) {
    const skipped = tiers.filter((t) => t.status === "SKIP");
    const byReason = new Map<string, string[]>();
    for (const t of skipped) {
      byReason.set(t.reason ?? "?", [...byReason.get(t.reason ?? "?") ?? [], t.tier]);
    }
    const why = tiers.length && skipped.length === tiers.length
      ? `every tier was skipped: ${
        [...byReason].map(([reason, names]) => `${[...new Set(names)].join(", ")}: ${reason}`)
          .join("; ")
      }`
      : `nothing was judged (${results.length} result(s), every one a SKIP${
        results[0]?.reason ? `: ${results[0].reason.split("\n")[0]}` : ""
      })`;
    return { verdict: "SKIP", why };
  }
  return { verdict: "PASS" };
}
