/**
 * `deno task soak`: runs the cells again and again, optionally with CPU hogs on every
 * core, and sums what they did from their reports: failures, SIGKILLs delivered,
 * acknowledged operations, and acknowledged operations lost (which must stay 0). A
 * suite that flakes under load is worse than none: this is how flakes are found.
 *
 * Each run is one `deno test` process per leg (the cells against the target, with
 * `CELLS_REPORT_DIR` set), bounded by `--timeout`. Hogs are busy-loop child processes:
 * each ends on its own at the soak's worst-case end or when the soak dies, and the soak
 * kills them when it finishes.
 *
 * Flags and exit codes: `deno task soak --help` ({@linkcode SOAK_CLI}). Writes
 * `.cache/soak/report.json` unless `--json` names another path; exits 1 on any failure or
 * loss, 2 on a usage error.
 *
 * @module
 */
import { LEG_PERMISSIONS, legChildEnv, parseFlags, type ToolSpec } from "./_cli.ts";
import { type CellId, CELLS } from "../cells/register.ts";
import { targetSpecifier } from "../cells/target.ts";
import { fileURLToPath } from "node:url";
import { join, resolve } from "node:path";
import { type CellReport, readCellReports } from "../cells/cell_report.ts";
import { type LegName, parseLeg } from "../harness/legs.ts";
import { explicitLibraryPath, systemLibraryPath } from "../session_db/sqlite/library.ts";
import { fixedSqlitePath } from "./build_sqlite.ts";
import { reasonLine } from "./_matrix_run.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));

/** Raised on a bad command line (exit 2). */
export class SoakUsageError extends Error {
  /** Creates the error. */
  constructor(message: string) {
    super(message);
    this.name = "SoakUsageError";
  }
}

/** What the soak runs. */
export interface SoakOptions {
  /** How many runs (each runs every leg once). */
  runs: number;
  /** Busy-loop processes alongside (default 0; 2 fills a 2-core machine). */
  hogs: number;
  /** The legs of each run (default: the default leg only). */
  legs: LegName[];
  /** `system`, `fixed`, or a library path (default: `DENO_SQLITE_PATH`, else system). */
  library: string;
  /** The cells (default all). */
  cells: number[];
  /** The target module specifier (default: the reference store). */
  target: string;
  /** Seconds one run of one leg may take before it is killed and counted as failed. */
  timeoutS: number;
  /** Where the JSON report goes. */
  json: string;
  /** Fail when a requested leg was never exercised. */
  strict?: boolean;
}

/** The soak's command line (its `--help`). */
export const SOAK_CLI: ToolSpec = {
  usage: "deno task soak",
  summary: `Runs the cells again and again, each run one \`deno test\` per leg (killed past
--timeout), optionally beside busy-loop CPU hogs, and sums the cells' reports: failures,
SIGKILLs delivered, acknowledged operations and acknowledged operations lost.`,
  flags: [
    { name: "--runs", value: "N", help: "runs, each of every leg (1 to 100000)", default: "10" },
    { name: "--hogs", value: "N", help: "busy-loop CPU hogs alongside (0 to 64)", default: "0" },
    { name: "--legs", value: "LIST", help: "journal-mode legs of each run", default: "default" },
    {
      name: "--library",
      value: "LIB",
      help: "system, fixed, or a SQLite library path",
      default: "DENO_SQLITE_PATH, else system",
    },
    { name: "--cells", value: "LIST", help: "cells to run", default: "every cell" },
    {
      name: "--target",
      value: "MODULE",
      help: "the store's target module",
      default: "the reference store",
    },
    {
      name: "--timeout",
      value: "S",
      help: "seconds one leg of one run may take (1 to 86400)",
      default: "600",
    },
    { name: "--json", value: "PATH", help: "the JSON report", default: ".cache/soak/report.json" },
    {
      name: "--strict",
      help: "fail when a requested leg was never exercised (every cell SKIPPED)",
    },
  ],
  exitCodes: {
    0: "no cell failed and nothing acknowledged was lost",
    1: "a failure or a loss, or (--strict) a requested leg never exercised",
  },
};

/**
 * Parses the soak's command line (`--help` prints {@linkcode SOAK_CLI} and exits).
 *
 * @param args The arguments.
 * @returns The options.
 * @throws {SoakUsageError} On an unknown flag or a bad value, naming the fix.
 * @example
 * ```ts
 * import { parseSoakArgs } from "./soak.ts";
 * console.log(parseSoakArgs(["--runs", "3", "--hogs", "2"]).hogs); // 2
 * ```
 */
export function parseSoakArgs(args: readonly string[]): SoakOptions {
  const usage = (message: string): never => {
    throw new SoakUsageError(message);
  };
  const flags = parseFlags(SOAK_CLI, args, usage);
  const known = Object.keys(CELLS).map(Number) as CellId[];
  const cells = flags.list("--cells")?.map((cell) => {
    const id = Number(cell) as CellId;
    if (!/^\d+$/.test(cell) || !known.includes(id)) {
      usage(`Unknown cell "${cell}" in --cells: use some of ${known.join(", ")}`);
    }
    return id;
  });
  if (cells?.length === 0) usage(`Invalid --cells: name at least one of ${known.join(", ")}`);
  const legs = flags.list("--legs")?.map((leg) => {
    try {
      return parseLeg(leg);
    } catch (error) {
      return usage((error as Error).message);
    }
  });
  if (legs?.length === 0) usage("Invalid --legs: name at least one of default, delete, wal");
  const target = flags.string("--target");
  const json = flags.string("--json");
  return {
    runs: flags.int("--runs", 1, 100_000) ?? 10,
    hogs: flags.int("--hogs", 0, 64) ?? 0,
    legs: legs ?? ["default"],
    library: flags.string("--library") ?? "",
    cells: cells ?? known,
    target: target === undefined
      ? new URL("../cells/reference_target.ts", import.meta.url).href
      : targetSpecifier(target),
    timeoutS: flags.int("--timeout", 1, 86_400) ?? 600,
    json: json === undefined ? join(ROOT, ".cache/soak/report.json") : resolve(json),
    strict: flags.has("--strict"),
  };
}

/** Resolves `--library` to a path: `system`, `fixed`, a path, or the environment's. */
function resolveLibrary(wanted: string): string {
  if (wanted === "fixed") {
    const path = fixedSqlitePath();
    try {
      Deno.statSync(path);
    } catch {
      throw new SoakUsageError(
        `Cannot use the fixed SQLite: ${path} is not built (deno task sqlite)`,
      );
    }
    return path;
  }
  if (wanted && wanted !== "system") return resolve(wanted);
  const explicit = wanted === "" ? explicitLibraryPath() : undefined;
  if (explicit) return explicit;
  const system = systemLibraryPath();
  if (!system) {
    throw new SoakUsageError(
      "Cannot find the system libsqlite3: install it, or pass --library <path>",
    );
  }
  return system;
}

// --- hogs ---------------------------------------------------------------------------

/** Busy-loop processes that keep every core busy. */
export interface Hogs {
  /** Their pids. */
  pids: number[];
  /** CPU seconds they have used so far (as each last reported it, every half second). */
  cpuSeconds(): number;
  /** Kills (SIGKILL) and reaps them; idempotent. */
  stop(): Promise<void>;
  /** Resolves when every hog has exited (on its own or stopped). */
  exited: Promise<void>;
}

// Spins until its lifetime passes or its parent (the soak) is gone: a soak killed
// with SIGKILL leaves no hog behind for longer than a moment. Prints the CPU time it
// got every half second (a SIGKILLed hog cannot report at its end).
const HOG = `
import { cpuUsage } from "node:process";
const end = Date.now() + Number(Deno.args[0]);
const parent = Deno.ppid;
const out = new TextEncoder();
let x = 0;
let next = 0;
while (Date.now() < end && Deno.ppid === parent) {
  for (let i = 0; i < 1e6; i++) x = (x * 31 + i) | 0;
  if (Date.now() >= next) {
    const { user, system } = cpuUsage();
    Deno.stdout.writeSync(out.encode(\`\${user + system}\\n\`));
    next = Date.now() + 500;
  }
}
`;

/**
 * Starts `n` CPU hogs, each ending by itself after `maxMs` or when this process dies.
 *
 * @param n How many.
 * @param maxMs Their longest life.
 * @returns The hogs, to stop.
 * @example
 * ```ts
 * import { startHogs } from "./soak.ts";
 * const hogs = startHogs(2, 60_000);
 * await hogs.stop();
 * ```
 */
export function startHogs(n: number, maxMs: number): Hogs {
  const processes = Array.from({ length: n }, () =>
    new Deno.Command(Deno.execPath(), {
      args: ["eval", "--no-config", HOG, String(Math.max(0, Math.round(maxMs)))],
      stdin: "null",
      stdout: "piped",
      stderr: "null",
    }).spawn());
  const micros = processes.map(() => 0);
  const drained = processes.map(async (p, i) => {
    let pending = "";
    for await (const chunk of p.stdout.pipeThrough(new TextDecoderStream())) {
      const lines = (pending + chunk).split("\n");
      pending = lines.pop()!;
      const last = Number(lines.at(-1));
      if (Number.isFinite(last) && last > 0) micros[i] = last;
    }
  });
  const exited = Promise.all([...processes.map((p) => p.status), ...drained]).then(() => {});
  return {
    pids: processes.map((p) => p.pid),
    cpuSeconds: () => micros.reduce((a, b) => a + b, 0) / 1e6,
    async stop() {
      for (const p of processes) {
        try {
          p.kill("SIGKILL");
        } catch {
          // Already exited.
        }
      }
      await exited;
    },
    exited,
  };
}

// --- runs ---------------------------------------------------------------------------

/** One leg of one run. */
export interface LegOutcome {
  /** The run number, from 1. */
  run: number;
  /** The leg. */
  leg: LegName;
  /** `deno test`'s exit code (`null` when it was killed at the timeout). */
  code: number | null;
  /** Seconds taken. */
  seconds: number;
  /** The cells' reports. */
  reports: CellReport[];
  /** Failures: cells that failed or reported nothing, or the run itself. */
  failures: string[];
}

/** The sums over a soak. */
export interface SoakTotals {
  /** Runs × legs. */
  legRuns: number;
  /** Cell outcomes by status. */
  pass: number;
  /** Cell outcomes that failed (plus legs that failed without a cell report). */
  fail: number;
  /** Cells skipped (a leg not honoured, a store without the methods). */
  skip: number;
  /** SIGKILLs that ended a child. */
  sigkills: number;
  /** Operations acknowledged to a child. */
  acknowledgedOps: number;
  /** Acknowledged operations missing after recovery. */
  lost: number;
  /** The same, by cell. */
  byCell: Record<
    string,
    {
      pass: number;
      fail: number;
      skip: number;
      sigkills: number;
      acknowledgedOps: number;
      lost: number;
    }
  >;
}

const figure = (report: CellReport, name: string): number => {
  const value = report.figures[name];
  return typeof value === "number" && Number.isFinite(value) ? value : 0;
};

/**
 * Sums the outcomes of a soak.
 *
 * @param outcomes Every leg of every run.
 * @returns The totals.
 */
export function summarize(outcomes: readonly LegOutcome[]): SoakTotals {
  const totals: SoakTotals = {
    legRuns: outcomes.length,
    pass: 0,
    fail: 0,
    skip: 0,
    sigkills: 0,
    acknowledgedOps: 0,
    lost: 0,
    byCell: {},
  };
  for (const outcome of outcomes) {
    for (const report of outcome.reports) {
      const cell = totals.byCell[`${report.cell} ${report.title}`] ??= {
        pass: 0,
        fail: 0,
        skip: 0,
        sigkills: 0,
        acknowledgedOps: 0,
        lost: 0,
      };
      const key = report.status === "PASS" ? "pass" : report.status === "FAIL" ? "fail" : "skip";
      cell[key]++;
      totals[key]++;
      for (const name of ["sigkills", "acknowledgedOps", "lost"] as const) {
        cell[name] += figure(report, name);
        totals[name] += figure(report, name);
      }
    }
    // A leg that failed without any failed cell report (a crash, a timeout) still counts.
    if (outcome.failures.length && !outcome.reports.some((r) => r.status === "FAIL")) {
      totals.fail++;
    }
  }
  return totals;
}

async function runLeg(
  options: SoakOptions,
  library: string,
  testFile: string,
  run: number,
  leg: LegName,
): Promise<LegOutcome> {
  const reportDir = await Deno.makeTempDir({ prefix: "soak-report-" });
  const env = legChildEnv(library, leg, { CELLS_REPORT_DIR: reportDir });
  const started = performance.now();
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "test",
      ...LEG_PERMISSIONS,
      testFile,
    ],
    cwd: ROOT,
    clearEnv: true,
    env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    try {
      child.kill("SIGKILL");
    } catch {
      // Already gone.
    }
  }, options.timeoutS * 1000);
  const output = await child.output();
  clearTimeout(timer);
  const seconds = (performance.now() - started) / 1000;
  const { reports } = await readCellReports(reportDir);
  await Deno.remove(reportDir, { recursive: true });
  reports.sort((a, b) => a.cell - b.cell);
  const text = new TextDecoder().decode(output.stdout) + new TextDecoder().decode(output.stderr);
  const tail = text.trim().split("\n").slice(-3).join(" | ").slice(0, 300);
  const failures: string[] = [];
  for (const report of reports.filter((r) => r.status === "FAIL")) {
    failures.push(
      `cell ${report.cell}: ${reasonLine(report.reason)}${
        report.evidence ? ` (evidence: ${report.evidence})` : ""
      }`,
    );
  }
  for (const cell of options.cells) {
    if (!reports.some((r) => r.cell === cell)) failures.push(`cell ${cell}: no report (${tail})`);
  }
  if (timedOut) failures.push(`the run passed its timeout of ${options.timeoutS} s and was killed`);
  else if (output.code !== 0 && failures.length === 0) {
    failures.push(`deno test exited ${output.code}: ${tail}`);
  }
  return { run, leg, code: timedOut ? null : output.code, seconds, reports, failures };
}

/**
 * Runs the soak and prints a line per run and the totals.
 *
 * @param options What to run.
 * @returns The outcomes and totals (also written to `options.json`).
 */
export async function soak(
  options: SoakOptions,
): Promise<{ outcomes: LegOutcome[]; totals: SoakTotals; unexercised: LegName[] }> {
  const library = resolveLibrary(options.library);
  const testDir = await Deno.makeTempDir({ prefix: "soak-" });
  const testFile = join(testDir, "soak_test.ts");
  await Deno.writeTextFile(
    testFile,
    `import { registerCells } from ${
      JSON.stringify(new URL("../cells/mod.ts", import.meta.url).href)
    };\nawait registerCells({ target: ${JSON.stringify(options.target)}, cells: ${
      JSON.stringify(options.cells)
    } });\n`,
  );
  const worstCaseMs = options.runs * options.legs.length * (options.timeoutS + 30) * 1000;
  const hogs = startHogs(options.hogs, worstCaseMs);
  // Interrupted: no hog outlives the soak (they would also end on their own shortly).
  const stopHogs = () => {
    hogs.stop().finally(() => Deno.exit(130));
  };
  Deno.addSignalListener("SIGINT", stopHogs);
  console.log(
    `soak: ${options.runs} run(s) × legs ${options.legs.join(",")} of cells ${
      options.cells.join(",")
    } on ${library}, ${options.hogs} CPU hog(s)${
      hogs.pids.length ? ` (pids ${hogs.pids.join(", ")})` : ""
    }`,
  );
  const started = performance.now();
  const outcomes: LegOutcome[] = [];
  let hogSeconds: number | undefined;
  try {
    for (let run = 1; run <= options.runs; run++) {
      for (const leg of options.legs) {
        const outcome = await runLeg(options, library, testFile, run, leg);
        outcomes.push(outcome);
        const sum = summarize([outcome]);
        console.log(
          `run ${run}/${options.runs} leg ${leg}: ${sum.pass} pass, ${sum.fail} fail, ${sum.skip} skip in ${
            outcome.seconds.toFixed(1)
          } s; SIGKILLs ${sum.sigkills}, acknowledged ${sum.acknowledgedOps}, lost ${sum.lost}`,
        );
        for (const failure of outcome.failures) console.log(`  FAIL ${failure}`);
      }
    }
    hogSeconds = hogs.cpuSeconds();
  } finally {
    Deno.removeSignalListener("SIGINT", stopHogs);
    await hogs.stop();
    await Deno.remove(testDir, { recursive: true }).catch(() => {});
  }
  const seconds = (performance.now() - started) / 1000;
  const totals = summarize(outcomes);
  const failedRuns = new Set(outcomes.filter((o) => o.failures.length).map((o) => o.run));
  const report = {
    date: new Date().toISOString(),
    options: { ...options, library },
    seconds: Number(seconds.toFixed(1)),
    hogCpuSeconds: hogSeconds === undefined ? null : Number(hogSeconds.toFixed(1)),
    failedRuns: [...failedRuns],
    totals,
    outcomes: outcomes.map(({ reports, ...rest }) => ({
      ...rest,
      cells: reports.map((r) => ({
        cell: r.cell,
        status: r.status,
        sigkills: figure(r, "sigkills"),
        acknowledgedOps: figure(r, "acknowledgedOps"),
        lost: figure(r, "lost"),
        ...(r.reason ? { reason: r.reason.slice(0, 2000) } : {}),
        ...(r.evidence ? { evidence: r.evidence } : {}),
      })),
    })),
  };
  await Deno.mkdir(join(options.json, ".."), { recursive: true });
  await Deno.writeTextFile(options.json, JSON.stringify(report, null, 2) + "\n");
  console.log("");
  for (const [cell, t] of Object.entries(totals.byCell)) {
    console.log(
      `  cell ${cell}: ${t.pass} pass, ${t.fail} fail, ${t.skip} skip; SIGKILLs ${t.sigkills}, acknowledged ${t.acknowledgedOps}, lost ${t.lost}`,
    );
  }
  console.log(
    `soak: ${options.runs} runs (${totals.legRuns} leg runs) in ${
      seconds.toFixed(1)
    } s with ${options.hogs} hog(s)${
      hogSeconds === undefined ? "" : ` burning ${hogSeconds.toFixed(0)} CPU-s`
    }: ${failedRuns.size} failed run(s), ${totals.fail} cell failure(s); ${totals.sigkills} SIGKILLs delivered, ${totals.acknowledgedOps} acknowledged operations, ${totals.lost} lost; report: ${options.json}`,
  );
  const unexercised = options.legs.flatMap((leg) => {
    const reports = outcomes.filter((o) => o.leg === leg).flatMap((o) => o.reports);
    if (reports.some((r) => r.status !== "SKIP")) return [];
    const why = [...new Set(reports.map((r) => r.reason?.split("\n")[0] ?? "no report"))];
    console.log(`soak: leg ${leg} was never exercised: ${why.join("; ") || "no cell ran"}`);
    return [leg];
  });
  return { outcomes, totals, unexercised };
}

if (import.meta.main) {
  let options: SoakOptions;
  try {
    options = parseSoakArgs(Deno.args);
    resolveLibrary(options.library);
  } catch (error) {
    if (!(error instanceof SoakUsageError)) throw error;
    console.error(error.message);
    Deno.exit(2);
  }
  const { totals, unexercised } = await soak(options);
  const strictFail = options.strict === true && unexercised.length > 0;
  Deno.exit(totals.fail > 0 || totals.lost > 0 || strictFail ? 1 : 0);
}
