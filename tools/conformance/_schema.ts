// The conformance report's vocabulary (schema in docs/conformance.md): tiers, statuses,
// results, capabilities and the report itself. Shared by every file of the folder.

/** The report's schema name and version: bump the version on any incompatible change. */
export const SCHEMA = "session-conformance/report";
/** The schema version this code writes and reads. */
export const SCHEMA_VERSION = 1;

/** The tiers, in the order they run. */
export const TIERS = [
  "cells",
  "sweep",
  "syscalls-crash",
  "syscalls-power-loss",
  "powerloss-cells",
] as const;

/** A tier's name. */
export type TierName = typeof TIERS[number];

/** The levels, weakest first. */
export const LEVELS = ["NONE", "BASE", "DURABLE", "FULL"] as const;

/** A conformance level. */
export type Level = typeof LEVELS[number];

/** What a tier observed. */
export type RawStatus = "PASS" | "FAIL" | "SKIP" | "ERROR";

/** A result after the expectations manifest: XFAIL expected a failure, XPASS did not get it. */
export type Status = RawStatus | "XFAIL" | "XPASS";

/** The statuses in table order. */
export const STATUSES: readonly Status[] = ["PASS", "FAIL", "ERROR", "SKIP", "XFAIL", "XPASS"];

/** What a manifest expects of a result. */
export interface Expectation {
  /** `FAIL`: known broken; `INTERMITTENT`: passes or fails (either is accepted). */
  expect: "FAIL" | "INTERMITTENT";
  /** Why, one line. */
  reason: string;
  /** Where it is tracked (an issue, a doc). */
  link?: string;
}

/** One clause on one tier, leg and library (on one machine). */
export interface Result {
  /** The clause, e.g. `1 prefix durability`, or `crash points` for the sweep. */
  clause: string;
  /** The cell number whose clause it is, when there is one. */
  cell?: number;
  /** The tier. */
  tier: TierName;
  /** The journal-mode leg (`default`, `delete`, `wal`). */
  leg: string;
  /** The SQLite library (`system`, `fixed`), or `own` for a store bundling its own. */
  library: string;
  /** The SQLite version of the library, when known. */
  sqliteVersion?: string;
  /** The machine (set by `--merge`, from the report's `machine.id`). */
  machine?: string;
  /** What the tier observed. */
  observed: RawStatus;
  /** The verdict after the expectations: XFAIL, XPASS, or the observed status. */
  status: Status;
  /** Why it failed or was skipped (one line; the evidence has the rest). */
  reason?: string;
  /** The manifest entry that matched. */
  expectation?: Expectation;
  /** Where the evidence was kept. */
  evidence?: string;
  /** The seed of its random choices. */
  seed?: number;
  /** The command that replays it. */
  replay?: string;
  /** Wall time, when measured per result. */
  seconds?: number;
}

/** How a tier went as a whole. */
export interface TierRun {
  /** The tier. */
  tier: TierName;
  /** `RAN`, or `SKIP` when it does not apply or cannot run here (with the reason). */
  status: "RAN" | "SKIP";
  /** Why it was skipped. */
  reason?: string;
  /** Wall time. */
  seconds: number;
}

/** What the target offers, detected. */
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
  /** Whether the file-system call recorder can be built here (power loss recordable). */
  recorder: { ok: boolean; reason?: string };
  /**
   * The flags the target's children get beyond the cells' narrow scope (its declared
   * `childPermissions`), e.g. `--allow-sys=cpus`; absent when it declares none.
   */
  childPermissions?: string[];
  /** Why the target cannot run under the cells' scoped children, if it cannot. */
  scopedChildren?: string;
  /** Why the target cannot run here at all (e.g. its package is not installed), if not. */
  unavailable?: string;
}

/** The machine a report comes from. */
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

/** The report `deno task conformance` writes (JSON), and `--merge` reads and writes. */
export interface ConformanceReport {
  /** Always {@linkcode SCHEMA}. */
  schema: typeof SCHEMA;
  /** {@linkcode SCHEMA_VERSION}. */
  version: number;
  /** The level reached (the weakest over machines when merged). */
  level: Level;
  /** The next level and what it lacks (absent at FULL). */
  next?: { level: Level; missing: string[] };
  /** `PASS` or `FAIL`: the run's one-line verdict (FAIL, XPASS under strict, fail it). */
  verdict: "PASS" | "FAIL";
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
  counts: Record<Status, number>;
}

/** Counts the results by status. */
export function countStatuses(results: readonly Result[]): Record<Status, number> {
  const counts = { PASS: 0, FAIL: 0, ERROR: 0, SKIP: 0, XFAIL: 0, XPASS: 0 };
  for (const r of results) counts[r.status]++;
  return counts;
}

/** The verdict: FAIL on any FAIL, and on any XPASS under `strict`. */
export function verdictOf(results: readonly Result[], strict: boolean): "PASS" | "FAIL" {
  // An ERROR (the suite failed, not the store) is no PASS either.
  const bad = results.some((r) =>
    r.status === "FAIL" || r.status === "ERROR" || (strict && r.status === "XPASS")
  );
  return bad ? "FAIL" : "PASS";
}
