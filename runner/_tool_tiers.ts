// The tiers after the cells (the crash sweep, the file-system call tier in crash and
// power-loss modes, the power-loss cells), one leg × library at a time, until their
// engine returns typed results itself: each runs its tool as a child that writes a JSON
// report (or the cells' report files) to a path given here, read back typed. Nothing is
// read from a child's console except the tail of a child that wrote no report (an ERROR).
// This file is the one seam to swap for that engine's functions.
import { readCellReports } from "../cells/cell_report.ts";
import type { LegName } from "../harness/legs.ts";
import { TASK_PERMISSIONS } from "../harness/permissions.ts";
import { fromFileUrl } from "../internal/path.ts";
import { CELL_TITLES } from "./cells.ts";
import { legChildEnv } from "./leg_child.ts";
import { NO_CRASH_POINTS } from "./levels.ts";
import type { Library } from "./libraries.ts";
import type { Capabilities } from "./report_schema.ts";
import type { Outcome, TierName } from "./result.ts";

const ROOT = fromFileUrl(new URL("../", import.meta.url));
const tool = (path: string) => fromFileUrl(new URL(`../tools/${path}`, import.meta.url));

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
}

/**
 * The power-loss cells in two units per leg of about equal work (cell 1 and 5, cells 3
 * and 4), so that two slots share a leg's states: each unit is one child and one probe.
 */
const POWER_LOSS_UNITS: readonly (readonly number[])[] = [[1, 5], [3, 4]];

/** Why a tier cannot run for this store here, or `undefined` when it can. */
export function tierSkipReason(tier: ToolTier, caps: Capabilities): string | undefined {
  if (caps.openError) return `the store cannot open: ${caps.openError}`;
  if (tier === "sweep") {
    return caps.crashPoints
      ? undefined
      : "the target declares no crash points (export crashPoints())";
  }
  if (!caps.recorder.ok) return caps.recorder.reason ?? "the recorder does not build here";
  if (tier === "powerloss-cells") return caps.scopedChildren;
  return undefined;
}

/** The units of a tier on one leg × library: the power-loss cells' groups of cells. */
export function tierUnits(tier: ToolTier, caps: Capabilities): (number[] | undefined)[] {
  if (tier !== "powerloss-cells") return [undefined];
  return POWER_LOSS_UNITS.map((group) =>
    group.filter((cell) => caps.cells[cell]?.available !== false)
  ).filter((group) => group.length);
}

async function runTool(args: string[], env: Record<string, string>) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--no-lock", "--unstable-kv", ...TASK_PERMISSIONS, ...args],
    cwd: ROOT,
    clearEnv: true,
    env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  return { code: out.code, tail: text.trim().split("\n").slice(-8).join("\n") };
}

const base = (tier: ToolTier, ctx: UnitContext, clause: string, cell?: number, leg?: string) => ({
  clause,
  ...(cell !== undefined ? { cell } : {}),
  tier,
  leg: leg ?? ctx.legs.join(","),
  library: ctx.library.label,
  ...(ctx.caps.engine.kind !== "unknown" ? { engine: ctx.caps.engine } : {}),
});

/** A child that wrote no report: the suite failed, not the store. */
const toolError = (
  tier: ToolTier,
  ctx: UnitContext,
  clause: string,
  out: { code: number; tail: string },
  replay: string,
  cell?: number,
): Outcome => ({
  ...base(tier, ctx, clause, cell),
  status: "ERROR",
  reason: `${tier} wrote no report (exit ${out.code}): ${out.tail}`,
  checks: [`${tier} wrote no report (exit ${out.code})`],
  replay,
});

/** The shape of the sweep tool's JSON report this file reads. */
interface SweepJson {
  reports: {
    seed: number;
    sqliteVersion: string;
    legs: {
      leg: LegName;
      status: "RUN" | "SKIP";
      reason?: string;
      states: number;
      seconds: number;
      uncovered: { point: string; reason: string }[];
      failures: {
        state: string;
        clause: string;
        problems: string[];
        evidence?: string;
        replay: string;
      }[];
    }[];
  }[];
}

async function sweepUnit(ctx: UnitContext): Promise<Outcome[]> {
  const json = await Deno.makeTempFile({ prefix: "conformance-sweep-", suffix: ".json" });
  const args = [
    "--target",
    ctx.target,
    "--legs",
    ctx.legs.join(","),
    "--jobs",
    "1",
    ...(ctx.quick ? ["--no-sequences", "--k", "1"] : []),
    ...(ctx.seed !== undefined ? ["--seed", String(ctx.seed)] : []),
  ];
  const replay = `DENO_SQLITE_PATH=${ctx.library.path} deno task sweep ${args.join(" ")}`;
  const env = legChildEnv(ctx.library.path, "default", { CELLS_EVIDENCE_DIR: ctx.evidenceDir });
  const out = await runTool([tool("sweep/main.ts"), ...args, "--json", json, "--no-summary"], env);
  let report: SweepJson;
  try {
    report = JSON.parse(await Deno.readTextFile(json));
  } catch {
    return [toolError("sweep", ctx, "crash points", out, replay)];
  } finally {
    await Deno.remove(json).catch(() => {});
  }
  return report.reports.flatMap((r) =>
    r.legs.map((leg): Outcome => {
      const first = leg.failures[0];
      const checks = [
        ...leg.failures.map((f) => `${f.state}: ${f.clause}: ${f.problems[0] ?? ""}`),
        ...leg.uncovered.map((u) => `crash point ${u.point} not covered: ${u.reason}`),
      ];
      const judged = leg.status === "SKIP" ? 0 : leg.states;
      const status = leg.status === "SKIP"
        ? "SKIP"
        : checks.length
        ? "FAIL"
        : judged
        ? "PASS"
        : "SKIP";
      return {
        ...base("sweep", ctx, "crash points", undefined, leg.leg),
        sqliteVersion: r.sqliteVersion,
        status,
        ...(status === "SKIP" ? { reason: leg.reason ?? "no crash state was judged" } : {}),
        ...(checks.length ? { reason: `${checks.length} failing: ${checks[0]}`, checks } : {}),
        ...(first?.evidence ? { evidence: first.evidence } : {}),
        seed: r.seed,
        seconds: leg.seconds,
        judged,
        replay: first?.replay ?? replay,
      };
    })
  );
}

/** The shape of the file-system call tool's JSON report this file reads. */
interface SyscallsJson {
  status: "PASS" | "FAIL" | "SKIP" | "ERROR";
  reason?: string;
  states: number;
  failures: string[];
  replay?: string;
  runFolder?: string;
}

async function syscallsUnit(tier: ToolTier, ctx: UnitContext): Promise<Outcome[]> {
  const json = await Deno.makeTempFile({ prefix: "conformance-syscalls-", suffix: ".json" });
  const args = [
    "--target",
    ctx.target,
    "--mode",
    tier === "syscalls-crash" ? "crash" : "power-loss",
    ...(ctx.legs[0] !== "default" ? ["--journal-mode", ctx.legs[0]!] : []),
    ...(ctx.quick ? ["--appends", "8", "--kills", "3", "--samples", "4"] : []),
    ...(ctx.seed !== undefined ? ["--seed", String(ctx.seed)] : []),
  ];
  const replay = `DENO_SQLITE_PATH=${ctx.library.path} deno task syscalls ${args.join(" ")}`;
  const out = await runTool(
    [tool("syscalls.ts"), ...args, "--json", json],
    legChildEnv(ctx.library.path, "default"),
  );
  let report: SyscallsJson;
  try {
    report = JSON.parse(await Deno.readTextFile(json));
  } catch {
    return [toolError(tier, ctx, "1 prefix durability", out, replay, 1)];
  } finally {
    await Deno.remove(json).catch(() => {});
  }
  const status = report.status === "PASS" && !report.states ? "SKIP" : report.status;
  return [{
    ...base(tier, ctx, "1 prefix durability", 1),
    status,
    ...(report.reason ? { reason: report.reason } : {}),
    ...(status === "SKIP" && !report.reason ? { reason: "no crash state was judged" } : {}),
    ...(report.failures.length ? { checks: report.failures } : {}),
    ...(report.runFolder ? { evidence: report.runFolder } : {}),
    judged: report.states,
    replay: report.replay ?? replay,
  }];
}

async function powerLossCellUnit(ctx: UnitContext, cells: number[]): Promise<Outcome[]> {
  const reportDir = await Deno.makeTempDir({ prefix: "conformance-pl-" });
  const leg = ctx.legs[0]!;
  const args = [
    "--target",
    ctx.target,
    "--cells",
    cells.join(","),
    ...(ctx.quick ? ["--subsets", "4"] : []),
    ...(ctx.seed !== undefined ? ["--seed", String(ctx.seed)] : []),
  ];
  const journal = leg !== "default" ? `SESSION_DB_JOURNAL_MODE=${leg} ` : "";
  const replay = `DENO_SQLITE_PATH=${ctx.library.path} ${journal}deno task powerloss-cells ${
    args.join(" ")
  }`;
  const env = legChildEnv(ctx.library.path, leg, {
    CELLS_REPORT_DIR: reportDir,
    CELLS_EVIDENCE_DIR: ctx.evidenceDir,
  });
  const out = await runTool([tool("powerloss_cells.ts"), ...args], env);
  const { reports } = await readCellReports(reportDir);
  await Deno.remove(reportDir, { recursive: true }).catch(() => {});
  const missing = cells.filter((cell) => !reports.some((r) => r.cell === cell));
  const errors = missing.map((cell) =>
    toolError("powerloss-cells", ctx, `${cell} power-loss ${CELL_TITLES[cell]}`, out, replay, cell)
  );
  return [
    ...errors,
    ...reports.map((r): Outcome => {
      const seed = typeof r.figures.seed === "number" ? r.figures.seed : undefined;
      const failed = r.status === "FAIL" || r.status === "ERROR";
      const own = ctx.library.label === "own" || ctx.library.label === "none";
      return {
        ...base("powerloss-cells", ctx, `${r.cell} ${r.title}`, r.cell),
        ...(r.engine ? { engine: r.engine } : {}),
        ...(!own ? { sqliteVersion: r.sqliteVersion } : {}),
        status: r.status,
        ...(r.reason ? { reason: r.reason } : {}),
        ...(failed ? { checks: r.checks ?? [r.reason?.split("\n")[0] ?? ""] } : {}),
        ...(r.diagnoses?.length ? { diagnoses: r.diagnoses } : {}),
        ...(r.evidence ? { evidence: r.evidence } : {}),
        ...(seed !== undefined ? { seed } : {}),
        figures: r.figures,
        replay: r.replay ??
          `DENO_SQLITE_PATH=${ctx.library.path} ${journal}deno task powerloss-cells --target ${ctx.target} --cells ${r.cell}${
            seed !== undefined ? ` --seed ${seed}` : ""
          }`,
      };
    }),
  ];
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
export function runTierUnit(
  tier: ToolTier,
  ctx: UnitContext,
  cells?: number[],
): Promise<Outcome[]> {
  if (tier === "sweep") return sweepUnit(ctx);
  if (tier === "powerloss-cells") return powerLossCellUnit(ctx, cells ?? [1]);
  return syscallsUnit(tier, ctx);
}
