// The tiers after the cells (the crash sweep, the file-system call tier in crash and
// power-loss modes, the power-loss cells), one leg × library at a time, through the sweep
// engine's typed results (`runner/sweep/`): nothing is read from a console.
import { crashPointsSetting } from "../cells/contract/load_target.ts";
import type { LegName } from "../harness/legs.ts";
import type { SkipKind } from "../cells/engine/report.ts";
import { powerLossCellsTier, sweepTier } from "./sweep/tier.ts";
import { faultTier } from "./fault_tier.ts";
import type { Library } from "./libraries.ts";
import type { Capabilities } from "./report_schema.ts";
import type { Outcome, TierName } from "./result.ts";

/** A tier after the cells. */
export type ToolTier = Exclude<TierName, "cells">;

/** What one unit (a tier on one leg × library) gets. */
export interface UnitContext {
  /** The target specifier. */
  target: string;
  /** What the target offers. */
  caps: Capabilities;
  /** The legs (one, but the sweep takes every honoured leg of its library at once). */
  legs: LegName[];
  /** The library (or the store's own engine's label). */
  library: Library;
  /** Short runs and fewer states. */
  quick: boolean;
  /** Where evidence goes. */
  evidenceDir: string;
  /** The seed of the random choices, when given. */
  seed?: number;
  /** How long one judging of a crash state in the tier's own process may take. */
  judgingDeadlineMs?: number;
}

/**
 * The power-loss cells in units per leg of about equal work (cell 1 and 5, cells 3 and 4,
 * cells 8, 9 and 10, cells 11 and 12), so that slots share a leg's states: each unit is one
 * child and one probe.
 */
const POWER_LOSS_UNITS: readonly (readonly number[])[] = [[1, 5], [3, 4], [8, 9, 10], [11, 12]];

/** Why the sweep of named crash points skips a target that declares none. */
export const NO_CRASH_POINTS = "the target declares no crash points (export crashPoints())";

/** Why a tier cannot run for this store here (and its kind), or `undefined` when it can. */
export function tierSkip(
  tier: ToolTier,
  caps: Capabilities,
): { reason: string; skipKind?: SkipKind } | undefined {
  if (caps.openError) return { reason: `the store cannot open and write: ${caps.openError}` };
  if (tier === "sweep") {
    if (caps.crashPoints) return undefined;
    const reason = crashPointsSetting() === "none"
      ? "its crash points are set aside (CELLS_CRASH_POINTS=none)"
      : NO_CRASH_POINTS;
    return { reason, skipKind: "no-crash-points" };
  }
  // Its clauses that need the recorder SKIP one by one; the others run anywhere.
  if (tier === "faults") return undefined;
  if (!caps.recorder.ok) {
    return { reason: caps.recorder.reason ?? "the recorder does not build here" };
  }
  if (tier === "powerloss-cells" && caps.scopedChildren) return { reason: caps.scopedChildren };
  return undefined;
}

/**
 * The units of a tier on one leg × library: the power-loss cells' groups of cells, of those
 * asked for (`asked`, every one when absent).
 */
export function tierUnits(
  tier: ToolTier,
  caps: Capabilities,
  asked?: readonly number[],
): (number[] | undefined)[] {
  if (tier !== "powerloss-cells") return [undefined];
  return POWER_LOSS_UNITS.map((group) =>
    group.filter((cell) => caps.cells[cell]?.available !== false && (asked?.includes(cell) ?? true))
  ).filter((group) => group.length);
}

/**
 * Runs one unit: a tier on one leg × library (the sweep on every honoured leg of the
 * library; the power-loss cells a group of them).
 *
 * @param tier The tier.
 * @param ctx The target, legs, library and settings.
 * @param cells The power-loss cells of the unit, for that tier.
 * @returns Its outcomes.
 */
export async function runTierUnit(
  tier: ToolTier,
  ctx: UnitContext,
  cells?: number[],
): Promise<Outcome[]> {
  const options = {
    target: ctx.target,
    legs: ctx.legs,
    libraries: [{ label: ctx.library.label, path: ctx.library.path }],
    quick: ctx.quick,
    evidenceDir: ctx.evidenceDir,
    jobs: 1,
    ...(ctx.seed !== undefined ? { seed: ctx.seed } : {}),
    ...(ctx.judgingDeadlineMs !== undefined ? { judgingDeadlineMs: ctx.judgingDeadlineMs } : {}),
  };
  const outcome = tier === "powerloss-cells"
    ? await powerLossCellsTier({ ...options, cells: cells ?? [1] })
    : tier === "faults"
    ? await faultTier(options)
    : await sweepTier({ ...options, tier });
  const engine = ctx.caps.engine;
  if (outcome.results.length) {
    // On its own SQLite, a row names the store's version (the sweep reports none for it).
    const version = engine.kind === "own-sqlite" ? engine.sqliteVersion : undefined;
    return version
      ? outcome.results.map((r) => ({ ...r, sqliteVersion: version }))
      : outcome.results;
  }
  // A tier that returned no result judged nothing: a SKIP with why, never a PASS.
  return [{
    clause: tier === "sweep" ? "crash points" : "every clause",
    tier,
    leg: ctx.legs.join(","),
    library: ctx.library.label,
    ...(engine.kind !== "unknown" ? { engine } : {}),
    status: "SKIP",
    reason: outcome.run.reason ?? "nothing was judged",
    judged: 0,
  }];
}
