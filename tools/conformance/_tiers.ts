// The tiers `deno task conformance` runs, each turned into results: the cells on every
// leg × library (the matrix's machinery); the crash sweep, the file-system call tiers
// (crash and power-loss modes) and the power-loss cells through the engine's typed results
// (`runner/sweep/`).
import type { LegName } from "../../harness/legs.ts";
import { type Library, oneLine, type Row, runMatrix } from "../_matrix_run.ts";
import type { Outcome } from "../../runner/result.ts";
import * as engine from "../../runner/sweep/mod.ts";
import type { Capabilities, Result, TierName, TierRun } from "./_schema.ts";

/** What every tier gets. */
export interface TierContext {
  /** The target specifier. */
  target: string;
  /** What the target offers. */
  caps: Capabilities;
  /** The requested legs. */
  legs: readonly LegName[];
  /** The available libraries. */
  libraries: readonly Library[];
  /** Short spans and fewer states. */
  quick: boolean;
  /** Where evidence goes. */
  evidenceDir: string;
  /** Legs run at once in the cells tier. */
  jobs: number;
}

/** A tier's outcome. */
export interface TierOutcome {
  /** How the tier went. */
  run: TierRun;
  /** Its results (observed only; the manifest is applied later). */
  results: Omit<Result, "status">[];
}

/** The cells' titles, for rows of a tier that could not run them. */
export const CELL_TITLES: Readonly<Record<number, string>> = {
  1: "prefix durability",
  2: "consume-once",
  3: "rotation atomicity",
  4: "fork determinism",
  5: "delivery outbox exactly-once",
  6: "concurrent writers",
  7: "fenced ownership",
};

const skip = (tier: TierName, reason: string): TierOutcome => ({
  run: { tier, status: "SKIP", reason, seconds: 0 },
  results: [],
});

/** The legs a tier after the cells runs on: those the cells found honoured, else default. */
function legsFor(ctx: TierContext, library: string): LegName[] {
  const honoured = ctx.caps.legsHonoured.filter((l) => l.endsWith(` × ${library}`))
    .map((l) => l.split(" × ")[0] as LegName);
  return honoured.length ? honoured : ctx.legs.includes("default") ? ["default"] : [];
}

/** The cells on every leg × library. */
export async function cellsTier(ctx: TierContext): Promise<TierOutcome> {
  const started = performance.now();
  const cells = Object.keys(ctx.caps.cells).map(Number);
  const why = ctx.caps.unavailable ?? ctx.caps.scopedChildren;
  if (why) {
    const results = ctx.libraries.flatMap((library) =>
      ctx.legs.flatMap((leg) =>
        cells.map((cell) => ({
          clause: `${cell} ${CELL_TITLES[cell] ?? ""}`.trim(),
          cell,
          tier: "cells" as const,
          leg,
          library: library.label,
          observed: "SKIP" as const,
          reason: why,
        }))
      )
    );
    return { run: { tier: "cells", status: "SKIP", reason: why, seconds: 0 }, results };
  }
  const env: Record<string, string> = { CELLS_EVIDENCE_DIR: ctx.evidenceDir };
  if (ctx.quick) env.CELLS_SPAN = "0.25";
  const { rows } = await runMatrix({
    target: ctx.target,
    cells,
    legs: ctx.legs,
    libraries: ctx.libraries,
    jobs: ctx.jobs,
    env,
    onLeg(run, rows, seconds) {
      const n = (s: string) => rows.filter((r) => r.status === s).length;
      console.log(
        `  cells: leg ${run.leg} on ${run.library.label}: ${n("PASS")} pass, ${n("FAIL")} fail, ${
          n("SKIP")
        } skip in ${seconds.toFixed(1)} s`,
      );
    },
  });
  for (const row of rows) {
    const key = `${row.leg} × ${row.library}`;
    if (row.cell === 1 && row.status !== "SKIP") ctx.caps.legsHonoured.push(key);
    if (row.cell === 1 && row.status === "SKIP") {
      ctx.caps.legsNotHonoured.push({ leg: row.leg, library: row.library, reason: row.detail });
    }
  }
  return {
    run: { tier: "cells", status: "RAN", seconds: (performance.now() - started) / 1000 },
    results: rows.map((row: Row) => ({
      clause: `${row.cell} ${row.title}`,
      cell: row.cell,
      tier: "cells" as const,
      leg: row.leg,
      library: row.library,
      sqliteVersion: row.sqliteVersion,
      observed: row.status,
      ...(row.status !== "PASS" ? { reason: row.detail } : {}),
      ...(row.evidence ? { evidence: row.evidence } : {}),
      ...(row.seed !== undefined ? { seed: row.seed } : {}),
      replay:
        `deno task matrix --target ${ctx.target} --cells ${row.cell} --legs ${row.leg} --libraries ${row.library}${
          row.seed !== undefined ? ` --seed ${row.seed}` : ""
        }`,
    })),
  };
}

/** An engine outcome as this report's result (observed; the manifest is applied later). */
function asResult(outcome: Outcome): Omit<Result, "status"> {
  const { status, judged: _judged, figures: _figures, checks, diagnoses: _d, engine: _e, ...rest } =
    outcome;
  return {
    ...rest,
    observed: status,
    ...(outcome.reason || checks?.length
      ? { reason: oneLine(outcome.reason ?? checks![0]!, 400) }
      : {}),
  };
}

async function engineTier(
  tier: TierName,
  ctx: TierContext,
  run: (options: engine.TierOptions) => Promise<{ run: TierRun; results: Outcome[] }>,
): Promise<TierOutcome> {
  if (ctx.caps.unavailable) return skip(tier, ctx.caps.unavailable);
  const legsOf = ctx.libraries.map((library) => legsFor(ctx, library.label));
  const legs = [...new Set(legsOf.flat())];
  if (!legs.length) return skip(tier, "no leg was honoured by the cells tier");
  const outcome = await run({
    target: ctx.target,
    legs,
    libraries: [...ctx.libraries],
    quick: ctx.quick,
    evidenceDir: ctx.evidenceDir,
    jobs: ctx.jobs,
  });
  return { run: outcome.run, results: outcome.results.map(asResult) };
}

/** The crash sweep over the target's declared crash points (`runner/sweep/`). */
export function sweepTier(ctx: TierContext): Promise<TierOutcome> {
  return engineTier("sweep", ctx, (o) => engine.sweepTier({ ...o, tier: "sweep" }));
}

/** The recorded-call sweep in one mode (`runner/sweep/`). */
export function syscallsTier(ctx: TierContext, mode: "crash" | "power-loss"): Promise<TierOutcome> {
  const tier = mode === "crash" ? "syscalls-crash" : "syscalls-power-loss";
  return engineTier(tier, ctx, (o) => engine.sweepTier({ ...o, tier }));
}

/** The power-loss cells (1, 3, 4, 5), for any store (`runner/sweep/`). */
export function powerLossCellsTier(ctx: TierContext): Promise<TierOutcome> {
  if (ctx.caps.scopedChildren) {
    return Promise.resolve(skip("powerloss-cells", ctx.caps.scopedChildren));
  }
  return engineTier("powerloss-cells", ctx, (o) => engine.powerLossCellsTier(o));
}
