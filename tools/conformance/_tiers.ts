// The tiers `deno task conformance` runs, each turned into results: the cells on every
// leg × library (the matrix's machinery), the crash sweep, the file-system call tier
// (crash and power-loss modes), and the power-loss cells. Each tool runs as a child with
// the tasks' permissions; its report or output is read back.
import { readCellReports } from "../../cells/cell_report.ts";
import { TASK_PERMISSIONS } from "../../harness/permissions.ts";
import type { LegName } from "../../harness/legs.ts";
import { fromFileUrl } from "../../internal/path.ts";
import { legChildEnv } from "../_cli.ts";
import { type Library, oneLine, type Row, runMatrix } from "../_matrix_run.ts";
import type { SweepReport } from "../../runner/sweep/_types.ts";
import type { Capabilities, Result, TierName, TierRun } from "./_schema.ts";

const ROOT = fromFileUrl(new URL("../../", import.meta.url));
const tool = (path: string) => fromFileUrl(new URL(`../${path}`, import.meta.url));

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

async function runTool(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--no-lock", ...args],
    cwd: ROOT,
    clearEnv: true,
    env: { ...env, NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

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

/** The crash sweep over the target's declared crash points. */
export async function sweepTier(ctx: TierContext): Promise<TierOutcome> {
  if (ctx.caps.unavailable) return skip("sweep", ctx.caps.unavailable);
  if (ctx.caps.crashPoints === 0) {
    return skip("sweep", "the target declares no crash points (export crashPoints())");
  }
  const started = performance.now();
  const results: Omit<Result, "status">[] = [];
  const json = await Deno.makeTempFile({ prefix: "conformance-sweep-", suffix: ".json" });
  for (const library of ctx.libraries) {
    const legs = legsFor(ctx, library.label);
    if (!legs.length) continue;
    const out = await runTool([
      ...TASK_PERMISSIONS,
      tool("sweep/main.ts"),
      "--target",
      ctx.target,
      "--legs",
      legs.join(","),
      "--json",
      json,
      "--no-summary",
      ...(ctx.quick ? ["--no-sequences", "--k", "1"] : []),
    ], legChildEnv(library.path, "default"));
    let reports: SweepReport[] = [];
    try {
      reports = JSON.parse(await Deno.readTextFile(json)).reports;
    } catch {
      results.push({
        clause: "crash points",
        tier: "sweep",
        leg: legs.join(","),
        library: library.label,
        observed: "FAIL",
        reason: `the sweep wrote no report (exit ${out.code}): ${oneLine(out.stderr, 300)}`,
      });
      continue;
    }
    for (const report of reports) {
      for (const leg of report.legs) {
        const first = leg.failures[0];
        const failed = leg.failures.length > 0 || leg.uncovered.length > 0;
        results.push({
          clause: "crash points",
          tier: "sweep",
          leg: leg.leg,
          library: library.label,
          sqliteVersion: report.sqliteVersion,
          observed: leg.status === "SKIP" ? "SKIP" : failed ? "FAIL" : "PASS",
          seed: report.seed,
          seconds: leg.seconds,
          ...(leg.status === "SKIP" ? { reason: leg.reason ?? "skipped" } : {}),
          ...(first
            ? {
              reason: `${leg.failures.length} failing states; ${first.state}: ${first.clause}: ${
                first.problems[0] ?? ""
              }`,
              replay: first.replay,
              ...(first.evidence ? { evidence: first.evidence } : {}),
            }
            : leg.uncovered.length
            ? { reason: `uncovered: ${leg.uncovered.map((u) => u.point).join(", ")}` }
            : {}),
        });
      }
    }
  }
  await Deno.remove(json).catch(() => {});
  return {
    run: { tier: "sweep", status: "RAN", seconds: (performance.now() - started) / 1000 },
    results,
  };
}

/** The file-system call tier (`tools/syscalls.ts`) in one mode: cell 1's clause. */
export async function syscallsTier(
  ctx: TierContext,
  mode: "crash" | "power-loss",
): Promise<TierOutcome> {
  const tier: TierName = mode === "crash" ? "syscalls-crash" : "syscalls-power-loss";
  if (ctx.caps.unavailable) return skip(tier, ctx.caps.unavailable);
  if (!ctx.caps.recorder.ok) return skip(tier, ctx.caps.recorder.reason ?? "no recorder");
  const started = performance.now();
  const results: Omit<Result, "status">[] = [];
  // A store with its own SQLite (or none) does not load the library: run it once.
  const libraries = ctx.caps.binding ? ctx.libraries : ctx.libraries.slice(0, 1);
  for (const library of libraries) {
    const label = ctx.caps.binding ? library.label : "own";
    const legs = ctx.caps.sqliteFile ? legsFor(ctx, library.label) : ["default" as const];
    for (const leg of legs) {
      const args = [
        "--target",
        ctx.target,
        "--mode",
        mode,
        ...(leg !== "default" ? ["--journal-mode", leg] : []),
        ...(ctx.quick ? ["--appends", "8", "--kills", "3", "--samples", "4"] : []),
      ];
      const env = legChildEnv(library.path, "default");
      const out = await runTool(
        ["--unstable-kv", ...TASK_PERMISSIONS, tool("syscalls.ts"), ...args],
        env,
      );
      const skipLine = out.stdout.split("\n").find((l) => l.startsWith("SKIP: "));
      const replay = out.stderr.split("\n").find((l) => l.startsWith("replay: "));
      const kept = out.stderr.split("\n").find((l) => l.startsWith("run folder kept: "));
      const fails = out.stderr.split("\n").filter((l) => l.startsWith("FAIL") || /^\w.*: /.test(l));
      results.push({
        clause: "1 prefix durability",
        cell: 1,
        tier,
        leg,
        library: label,
        observed: skipLine ? "SKIP" : out.code === 0 ? "PASS" : "FAIL",
        ...(skipLine ? { reason: skipLine.slice(6) } : {}),
        ...(out.code !== 0
          ? { reason: oneLine(fails.slice(0, 3).join("\n") || out.stderr, 400) }
          : {}),
        ...(kept ? { evidence: kept.slice("run folder kept: ".length) } : {}),
        replay: replay?.slice("replay: ".length) ??
          `DENO_SQLITE_PATH=${library.path} deno task syscalls ${args.join(" ")}`,
      });
    }
  }
  return { run: { tier, status: "RAN", seconds: (performance.now() - started) / 1000 }, results };
}

/** The power-loss cells (1, 3, 4, 5), for a store on this project's binding. */
export async function powerLossCellsTier(ctx: TierContext): Promise<TierOutcome> {
  const tier = "powerloss-cells";
  if (ctx.caps.unavailable) return skip(tier, ctx.caps.unavailable);
  if (!ctx.caps.binding) {
    return skip(
      tier,
      "the store does not reach SQLite through this project's binding (the recording VFS is registered there); the syscalls-power-loss tier judges power loss for it",
    );
  }
  if (ctx.caps.scopedChildren) return skip(tier, ctx.caps.scopedChildren);
  const started = performance.now();
  const results: Omit<Result, "status">[] = [];
  for (const library of ctx.libraries) {
    for (const leg of legsFor(ctx, library.label)) {
      const reportDir = await Deno.makeTempDir({ prefix: "conformance-pl-" });
      const env = legChildEnv(library.path, leg, {
        CELLS_REPORT_DIR: reportDir,
        CELLS_EVIDENCE_DIR: ctx.evidenceDir,
      });
      // powerloss_cells.ts has no --torn: half of its random states are torn already.
      const quick = ctx.quick ? ["--subsets", "4"] : [];
      const out = await runTool(
        [...TASK_PERMISSIONS, tool("powerloss_cells.ts"), "--target", ctx.target, ...quick],
        env,
      );
      const { reports } = await readCellReports(reportDir);
      await Deno.remove(reportDir, { recursive: true }).catch(() => {});
      if (!reports.length) {
        results.push({
          clause: "power-loss cells",
          tier,
          leg,
          library: library.label,
          observed: "FAIL",
          reason: `no cell reported (exit ${out.code}): ${oneLine(out.stdout + out.stderr, 300)}`,
        });
      }
      for (const r of reports) {
        const seed = typeof r.figures.seed === "number" ? r.figures.seed : undefined;
        const journal = leg !== "default" ? `SESSION_DB_JOURNAL_MODE=${leg} ` : "";
        results.push({
          clause: `${r.cell} ${r.title}`,
          cell: r.cell,
          tier,
          leg,
          library: library.label,
          sqliteVersion: r.sqliteVersion,
          observed: r.status,
          ...(r.reason ? { reason: oneLine(r.reason, 400) } : {}),
          ...(r.evidence ? { evidence: r.evidence } : {}),
          ...(seed !== undefined ? { seed } : {}),
          replay:
            `DENO_SQLITE_PATH=${library.path} ${journal}deno task powerloss-cells --target ${ctx.target} --cells ${r.cell}${
              seed !== undefined ? ` --seed ${seed}` : ""
            }`,
        });
      }
    }
  }
  return { run: { tier, status: "RAN", seconds: (performance.now() - started) / 1000 }, results };
}
