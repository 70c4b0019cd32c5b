/**
 * A store's verdict: every tier that can judge it (the cells on every leg × library, the
 * crash sweep, the file-system call tier in crash and power-loss modes, the power-loss
 * cells), its capabilities, its expectations manifest applied, its level and one report.
 * The tiers after the cells start on a leg as soon as the cells found it honoured, and
 * run side by side, `jobs` at a time.
 *
 * @example
 * ```ts ignore
 * import { runConformance } from "./conformance.ts";
 * const report = await runConformance({ target: "file:///srv/my_target.ts", quick: true });
 * console.log(report.verdict, report.level);
 * ```
 *
 * @module
 */
import { type LegName, LEGS } from "../harness/legs.ts";
import { fromFileUrl } from "../internal/path.ts";
import { Pool } from "./_pool.ts";
import { runTierUnit, tierSkip, tierUnits, type ToolTier } from "./_tool_tiers.ts";
import { detectCapabilities } from "./capabilities.ts";
import { CELL_TITLES, type LegRun, runCells } from "./cells.ts";
import { legFound, LegsFound } from "./_twin_legs.ts";
import { hostLibrary, type Library, libraryAxis } from "./libraries.ts";
import { levelOf } from "./levels.ts";
import { applyManifest, type Manifest } from "./manifest.ts";
import {
  type Capabilities,
  type ConformanceReport,
  countStatuses,
  type Machine,
  observedResults,
  REPORT_SCHEMA,
  REPORT_SCHEMA_VERSION,
  verdictOf,
} from "./report_schema.ts";
import { type Outcome, type TierName, type TierOutcome, TIERS } from "./result.ts";
import { JUDGING_DEADLINE_MS } from "../internal/judging_beacon.ts";
import { checkRunSettings } from "./cell_settings.ts";

const ROOT = fromFileUrl(new URL("../", import.meta.url));

/**
 * The suite could not run for a reason of its setting (no SQLite library at all, say).
 *
 * @example
 * ```ts
 * import { ConformanceSetupError } from "./conformance.ts";
 * const error = new ConformanceSetupError("Cannot run: no SQLite library is available");
 * console.log(error.name); // "ConformanceSetupError"
 * ```
 */
export class ConformanceSetupError extends Error {
  /** Creates the error. */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "ConformanceSetupError";
  }
}

/**
 * What the run tells as it goes.
 *
 * @example
 * ```ts
 * import type { ConformanceEvent } from "./conformance.ts";
 * const print = (e: ConformanceEvent) =>
 *   e.kind === "unit" && console.log(`${e.tier} ${e.leg} × ${e.library}: ${e.seconds} s`);
 * ```
 */
export type ConformanceEvent =
  | {
    kind: "capabilities";
    caps: Capabilities;
    libraries: Library[];
    unavailable: { label: string; why: string }[];
  }
  | {
    kind: "unit";
    tier: TierName;
    leg: string;
    library: string;
    /** The power-loss cells of the unit. */
    cells?: number[];
    outcomes: Outcome[];
    seconds: number;
  };

/**
 * Options of {@linkcode runConformance}.
 *
 * @example
 * ```ts
 * import type { ConformanceOptions } from "./conformance.ts";
 * const options: ConformanceOptions = {
 *   target: "file:///srv/my_target.ts",
 *   tiers: ["cells", "syscalls-crash"],
 *   machine: { id: "laptop", os: "linux", arch: "x86_64", deno: "2.9.6" },
 *   command: "my script",
 * };
 * ```
 */
export interface ConformanceOptions {
  /** The target specifier. */
  target: string;
  /** The tiers to run (default all). */
  tiers?: readonly TierName[];
  /** The legs (default all). */
  legs?: readonly LegName[];
  /** The libraries asked for: `system`, `fixed`, paths (default system and fixed). */
  libraries?: readonly string[];
  /** The cells (default all). */
  cells?: readonly number[];
  /** Build the fixed SQLite when missing (default true; never for a store on its own engine). */
  build?: boolean;
  /** Short spans and fewer states: a smoke run. */
  quick?: boolean;
  /** Legs of the cells and units of the other tiers run at once, each (default 2). */
  jobs?: number;
  /** Whether an XPASS fails the run. */
  strict?: boolean;
  /** The seed of every tier's random choices. */
  seed?: number;
  /** This machine. */
  machine: Machine;
  /** The expectations manifest. */
  manifest?: Manifest;
  /** Where evidence goes (default `CELLS_EVIDENCE_DIR`, else `.cache/evidence`). */
  evidenceDir?: string;
  /** How long the store may take to open (default `CELLS_OPEN_DEADLINE_MS`, else 30 s). */
  openDeadlineMs?: number;
  /** The command line, for the report. */
  command: string;
  /** Progress. */
  onEvent?(event: ConformanceEvent): void;
}

/** Per leg × library: a promise that says, once the cells ran there, whether cell 1 ran. */
type Honoured = (leg: LegName, library: string) => Promise<boolean>;

/**
 * The leg sets a tier runs on for one library, each as soon as it is known: every leg in
 * one set for the sweep (it takes them at once), else a set per leg, so a leg whose cells
 * reported starts without waiting for another leg's (the default leg's twin is found only
 * once its named legs ran). A leg is left out where the cells found it not honoured, and
 * beyond the default where a store whose file is not SQLite has no such journal mode.
 */
function unitLegs(
  tier: ToolTier,
  ctx: { caps: Capabilities; legs: readonly LegName[] },
  honoured: Honoured,
  library: string,
): Promise<LegName[]>[] {
  const asked = ctx.legs.map(async (leg) => {
    const notSqlite = !ctx.caps.sqliteFile && (tier.startsWith("syscalls") || tier === "faults") &&
      leg !== "default";
    return !notSqlite && await honoured(leg, library) ? [leg] : [];
  });
  if (tier !== "sweep") return asked;
  return [Promise.all(asked).then((sets) => sets.flat())];
}

async function toolTier(
  tier: ToolTier,
  ctx: CellsTierContext,
  honoured: Honoured,
  pool: Pool,
  options: ConformanceOptions,
  evidenceDir: string,
): Promise<TierOutcome> {
  const skip = tierSkip(tier, ctx.caps);
  if (skip) return { run: { tier, status: "SKIP", ...skip, seconds: 0 }, results: [] };
  const cellGroups = tierUnits(tier, ctx.caps, options.cells);
  if (!cellGroups.length) {
    const reason = "no cell asked for (--cells) has a power-loss variant this store can run";
    return { run: { tier, status: "SKIP", reason, seconds: 0 }, results: [] };
  }
  let first: number | undefined;
  let last = performance.now();
  const priority = { "powerloss-cells": 3, "sweep": 2 }[tier as string] ?? 1;
  const unit = (library: Library, legs: LegName[], cells?: number[]) =>
    pool.run(async () => {
      const started = performance.now();
      first ??= started;
      const found = await runTierUnit(tier, {
        target: ctx.target,
        caps: ctx.caps,
        legs,
        library,
        quick: options.quick ?? false,
        evidenceDir,
        judgingDeadlineMs: ctx.judgingDeadlineMs,
        ...(options.seed !== undefined ? { seed: options.seed } : {}),
      }, cells);
      last = performance.now();
      options.onEvent?.({
        kind: "unit",
        tier,
        leg: legs.join(","),
        library: library.label,
        ...(cells ? { cells } : {}),
        outcomes: found,
        seconds: (last - started) / 1000,
      });
      return found;
    }, priority);
  const units = ctx.libraries.flatMap((library) =>
    unitLegs(tier, ctx, honoured, library.label).map(async (known) => {
      const legs = await known;
      if (!legs.length) return [];
      const found = await Promise.all(cellGroups.map((cells) => unit(library, legs, cells)));
      return found.flat();
    })
  );
  const results = (await Promise.all(units)).flat();
  if (!results.length) {
    const reason =
      "no leg × library the cells found honoured (cell 1 SKIPPED on every one asked for)";
    return { run: { tier, status: "SKIP", reason, seconds: 0 }, results };
  }
  const seconds = first === undefined ? 0 : (last - first) / 1000;
  return { run: { tier, status: "RAN", seconds }, results };
}

interface CellsTierContext {
  target: string;
  caps: Capabilities;
  libraries: Library[];
  legs: readonly LegName[];
  /** How long one judging of a crash state in a tier's own process may take. */
  judgingDeadlineMs: number;
}

/** The cells tier and, per leg × library, whether its leg was honoured. */
interface CellsTier {
  outcome: Promise<TierOutcome>;
  honoured: Honoured;
}

// Without the cells (not asked for, or unable to run them) the other tiers run on the
// default leg: they audit the leg themselves.
const DEFAULT_LEG_ONLY: Honoured = (leg) => Promise.resolve(leg === "default");

/** The cells tier SKIPPED: not requested, or children cannot run under the cells' scope. */
function skippedCellsTier(
  ctx: CellsTierContext,
  cells: readonly number[],
  why: string | undefined,
): CellsTier {
  if (why === undefined) {
    const run = {
      tier: "cells" as const,
      status: "SKIP" as const,
      reason: "not requested (--tiers)",
      seconds: 0,
    };
    return { outcome: Promise.resolve({ run, results: [] }), honoured: DEFAULT_LEG_ONLY };
  }
  const results = ctx.libraries.flatMap((library) =>
    ctx.legs.flatMap((leg) =>
      cells.map((cell): Outcome => ({
        clause: `${cell} ${CELL_TITLES[cell] ?? ""}`.trim(),
        cell,
        tier: "cells",
        leg,
        library: library.label,
        status: "SKIP",
        reason: why,
      }))
    )
  );
  const run = { tier: "cells" as const, status: "SKIP" as const, reason: why, seconds: 0 };
  return { outcome: Promise.resolve({ run, results }), honoured: DEFAULT_LEG_ONLY };
}

/** The cells tier, resolving `honoured` per leg × library as each leg finishes. */
function cellsTier(
  ctx: CellsTierContext,
  options: ConformanceOptions,
  evidenceDir: string,
): CellsTier {
  const cells = options.cells ?? Object.keys(ctx.caps.cells).map(Number);
  // A store that cannot open FAILs whichever tiers were asked for (the cells tier says so).
  const asked = options.tiers?.includes("cells") ?? true;
  if (!asked && !ctx.caps.openError) return skippedCellsTier(ctx, cells, undefined);
  if (ctx.caps.scopedChildren) return skippedCellsTier(ctx, cells, ctx.caps.scopedChildren);
  const legs = new LegsFound();
  const found = (run: LegRun, cell1: Outcome | undefined) =>
    legs.record({ leg: run.leg, library: run.library.label }, legFound(cell1));
  const outcome = runCells({
    target: ctx.target,
    cells,
    legs: ctx.legs,
    libraries: ctx.libraries,
    engine: ctx.caps.engine,
    ...(ctx.caps.openError ? { openError: ctx.caps.openError } : {}),
    jobs: options.jobs ?? 2,
    judgingDeadlineMs: ctx.judgingDeadlineMs,
    ...(options.seed !== undefined ? { seed: options.seed } : {}),
    env: { CELLS_EVIDENCE_DIR: evidenceDir, ...(options.quick ? { CELLS_SPAN: "0.25" } : {}) },
    twinDefault: options.quick ?? false,
    twinLibraries: options.quick ?? false,
    // Cell 1 runs first in its leg: the later tiers may start there once it reported.
    onReport(run, outcome) {
      if (outcome.cell === 1) found(run, outcome);
    },
    onLeg(run: LegRun, outcomes, seconds) {
      found(run, outcomes.find((o) => o.cell === 1) ?? outcomes.find((o) => o.status !== "SKIP"));
      options.onEvent?.({
        kind: "unit",
        tier: "cells",
        leg: run.leg,
        library: run.library.label,
        outcomes,
        seconds,
      });
    },
  }).finally(() => legs.settle());
  // Under --quick a leg left to its twin is judged there by the later tiers too.
  const libraries = ctx.libraries.map((l) => l.label);
  const honoured: Honoured = async (leg, library) => {
    const found = await legs.of({ leg, library });
    if (!found.honoured) return false;
    if (!options.quick || !found.mode) return true;
    return await legs.twinOf({ leg, library }, { legs: ctx.legs, libraries }) === undefined;
  };
  return { outcome, honoured };
}

/**
 * Runs every requested tier that applies to the target and builds its report.
 *
 * @param options What to run and how.
 * @returns The report (the caller writes it).
 * @throws {ConformanceSetupError} When no SQLite library is available for a store on
 * this project's binding.
 * @example
 * ```ts ignore
 * import { runConformance } from "./conformance.ts";
 * const report = await runConformance({
 *   target: "file:///srv/my_target.ts",
 *   machine: { id: "ci", os: Deno.build.os, arch: Deno.build.arch, deno: Deno.version.deno },
 *   command: "conformance in CI",
 * });
 * if (report.level !== "FULL") console.log(report.next?.missing.join("\n"));
 * ```
 */
export async function runConformance(options: ConformanceOptions): Promise<ConformanceReport> {
  const evidenceDir = options.evidenceDir ?? Deno.env.get("CELLS_EVIDENCE_DIR") ??
    `${ROOT}.cache/evidence`;
  let deadline: number;
  try {
    deadline = checkRunSettings(options.openDeadlineMs);
  } catch (error) {
    throw new ConformanceSetupError((error as Error).message, { cause: error });
  }
  try {
    await Deno.mkdir(evidenceDir, { recursive: true });
  } catch (error) {
    throw new ConformanceSetupError(
      `Cannot create the evidence folder "${evidenceDir}": ${
        (error as Error).message
      }: set CELLS_EVIDENCE_DIR (or evidenceDir) to a folder this user can write`,
      { cause: error },
    );
  }
  const caps = await detectCapabilities(options.target, hostLibrary(), {
    openDeadlineMs: deadline,
  });
  const axis = await libraryAxis(caps.engine, options.libraries ?? ["system", "fixed"], {
    build: options.build ?? true,
  });
  options.onEvent?.({ kind: "capabilities", caps, ...axis });
  if (!axis.libraries.length) {
    throw new ConformanceSetupError(
      `Cannot run: no SQLite library is available (${
        axis.unavailable.map((u) => `${u.label}: ${u.why}`).join("; ")
      }): install libsqlite3, run deno task sqlite, or pass --libraries`,
    );
  }
  const ctx = {
    target: options.target,
    caps,
    libraries: axis.libraries,
    legs: options.legs ?? LEGS,
    // A store given longer to open is given as long to open what a crash left.
    judgingDeadlineMs: Math.max(JUDGING_DEADLINE_MS, deadline),
  };
  const tiers = options.tiers ?? TIERS;
  const cells = cellsTier(ctx, options, evidenceDir);
  const pool = new Pool(options.jobs ?? 2);
  const others = TIERS.filter((t): t is ToolTier => t !== "cells").map((tier) =>
    tiers.includes(tier)
      ? toolTier(tier, ctx, cells.honoured, pool, options, evidenceDir)
      : Promise.resolve<TierOutcome>({
        run: { tier, status: "SKIP", reason: "not requested (--tiers)", seconds: 0 },
        results: [],
      })
  );
  const outcomes = await Promise.all([cells.outcome, ...others]);
  for (const o of outcomes[0]!.results.filter((r) => r.cell === 1)) {
    if (o.status !== "SKIP") caps.legsHonoured.push(`${o.leg} × ${o.library}`);
    else caps.legsNotHonoured.push({ leg: o.leg, library: o.library, reason: o.reason ?? "" });
  }
  // Tier by tier; within a tier by cell, then leg, then library.
  const place = (
    o: Outcome,
  ) => [
    TIERS.indexOf(o.tier),
    o.cell ?? 0,
    ctx.legs.indexOf(o.leg as LegName),
    ctx.libraries.findIndex((l) => l.label === o.library),
    o.run ?? 0,
  ];
  const ordered = outcomes.flatMap((o) => o.results).sort((a, b) => {
    const [x, y] = [place(a), place(b)];
    return x.reduce((d, v, i) => d || v - y[i]!, 0);
  });
  const results = applyManifest(observedResults(ordered), options.manifest);
  const tierRuns = outcomes.map((o) => o.run);
  const level = levelOf(results, tierRuns);
  const { verdict, why } = verdictOf(results, options.strict ?? false, tierRuns);
  return {
    schema: REPORT_SCHEMA,
    version: REPORT_SCHEMA_VERSION,
    level: level.level,
    ...(level.next ? { next: level.next } : {}),
    verdict,
    ...(why ? { why } : {}),
    target: options.target,
    date: new Date().toISOString(),
    command: options.command,
    strict: options.strict ?? false,
    quick: options.quick ?? false,
    machines: [options.machine],
    capabilities: { [options.machine.id]: caps },
    ...(options.manifest ? { expectations: options.manifest.path } : {}),
    tiers: tierRuns,
    results,
    counts: countStatuses(results),
  };
}
