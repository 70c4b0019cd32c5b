// §4 of the bench: the wall time of `deno test -A`, `deno task matrix` and
// `deno task conformance --quick` on the reference, the crash tiers' states per second,
// and the peak memory of cell 1's writer child, each measured on a child process.
import { join } from "node:path";
import { TASK_PERMISSIONS } from "../../../harness/permissions.ts";
import { ROOT } from "./_config.ts";
import { childEnv, denoChild } from "./_children.ts";
import type { SuiteRow } from "./_report.ts";
import { atLeast, below } from "./_statistics.ts";
import { loadAverage, toolVerdict } from "../../_table.ts";
import { powerLossRate } from "../../powerloss_cells.ts";
import { checkingRate } from "../../sweep/main.ts";
import type { TierOutcome } from "../../../runner/result.ts";
import type { Status } from "../../../cells/engine/report.ts";

interface Timed {
  seconds: number;
  success: boolean;
  code: number;
}

/**
 * Runs `deno <args>` in the project root and times it (wall clock, start-up included).
 * What it found is read from the files it writes (a JSON report, a JUnit report), never
 * from its console.
 */
async function timedDeno(args: string[]): Promise<Timed> {
  const started = performance.now();
  const output = await new Deno.Command(Deno.execPath(), {
    args,
    cwd: ROOT,
    env: childEnv(undefined),
    clearEnv: true,
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).output();
  const seconds = (performance.now() - started) / 1000;
  return { seconds, success: output.success, code: output.code };
}

/** Runs a tool of the project as its `deno task` would, with `args`. */
function timedTool(tool: string, args: string[]): Promise<Timed> {
  return timedDeno(["run", ...TASK_PERMISSIONS, `tools/${tool}`, ...args]);
}

/** A tool's JSON report, or undefined when it wrote none (its exit code says enough). */
async function readReport<T>(path: string): Promise<T | undefined> {
  try {
    return JSON.parse(await Deno.readTextFile(path)) as T;
  } catch {
    return undefined;
  }
}

/** One test of a JUnit report: its name, time and whether it failed. */
interface TestCase {
  name: string;
  ms: number;
  failed: boolean;
}

const unescapeXml = (text: string) =>
  text.replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&lt;/g, "<").replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&");

/**
 * The top-level tests of the JUnit report `deno test --junit-path` wrote (a step is
 * written as `parent > step` beside its test and left out).
 */
function junitTests(xml: string): TestCase[] {
  const cases: TestCase[] = [];
  for (
    const m of xml.matchAll(
      /<testcase name="([^"]*)"[^>]*?time="([\d.]+)"[^>]*>([\s\S]*?)<\/testcase>/g,
    )
  ) {
    cases.push({
      name: unescapeXml(m[1]!),
      ms: Number(m[2]) * 1000,
      failed: m[3]!.includes("<failure"),
    });
  }
  const names = new Set(cases.map((c) => c.name));
  return cases.filter((c) => ![...names].some((n) => n !== c.name && c.name.startsWith(`${n} > `)));
}

/** The suite's wall times: their rows, and what the JSON report keeps besides. */
export interface SuiteWallTimes {
  rows: SuiteRow[];
  slowestTests: { name: string; ms: number }[];
  failedTests: string[];
  testExit: number;
  matrixExit: number;
  conformanceExit: number;
}

/** `deno test -A`, `deno task matrix` and `deno task conformance --quick`, timed. */
export async function suiteWallTimes(
  work: string,
  log: (line: string) => void,
): Promise<SuiteWallTimes> {
  const rows: SuiteRow[] = [];
  log("deno test -A");
  const junit = join(work, "test.junit.xml");
  const test = await timedDeno(["test", "-A", `--junit-path=${junit}`]);
  const tests = junitTests(await Deno.readTextFile(junit).catch(() => ""));
  const slow = [...tests].sort((a, b) => b.ms - a.ms).slice(0, 5);
  const failed = tests.filter((t) => t.failed).map((t) => t.name);
  rows.push({
    benchmark: "deno test -A, wall time",
    value: test.seconds,
    unit: "s",
    target: "< 30 s",
    result: test.success ? below(test.seconds, 30) : "FAIL (tests failed)",
    detail: `${
      tests.length
        ? `${tests.length - failed.length} passed, ${failed.length} failed`
        : `exit ${test.code}`
    }; slowest: ${
      slow.slice(0, 2).map((t) => `"${t.name.slice(0, 40)}" ${(t.ms / 1000).toFixed(1)} s`).join(
        ", ",
      )
    } (more in the JSON)${failed.length ? `; failed: ${failed.join(", ")}` : ""}`,
  });
  log("deno task matrix");
  const matrixJson = join(work, "matrix.json");
  const matrix = await timedTool("matrix.ts", ["--json", matrixJson]);
  type Counts = Record<Status, number>;
  const report = (await readReport<{ counts: Counts }>(matrixJson))?.counts;
  rows.push({
    benchmark: "deno task matrix (every cell x leg x library), wall time",
    value: matrix.seconds,
    unit: "s",
    target: "< 120 s",
    result: matrix.success ? below(matrix.seconds, 120) : "FAIL (matrix failed)",
    detail: `exit ${matrix.code}` +
      (report
        ? `; ${report.PASS} PASS, ${report.FAIL} FAIL, ${report.ERROR} ERROR, ${report.SKIP} SKIP`
        : ""),
  });
  log("deno task conformance --quick");
  const out = join(work, "conformance");
  const load = loadAverage();
  const quick = await timedTool("conformance.ts", [
    "--quick",
    ...["--json", `${out}/report.json`, "--markdown", `${out}/report.md`],
    ...["--junit", `${out}/report.xml`],
  ]);
  const verdict = await readReport<{ verdict: string; level: string; counts: Counts }>(
    `${out}/report.json`,
  );
  rows.push({
    benchmark: "deno task conformance --quick on the reference, wall time",
    value: quick.seconds,
    unit: "s",
    target: "< 60 s",
    result: quick.success ? below(quick.seconds, 60) : "FAIL (conformance failed)",
    detail: `exit ${quick.code}` +
      (verdict
        ? `; ${verdict.verdict}, level ${verdict.level}, ${verdict.counts.PASS} PASS, ${verdict.counts.SKIP} SKIP`
        : "") +
      `; load average ${load} before, ${loadAverage()} after`,
  });
  return {
    rows,
    slowestTests: slow.map(({ name, ms }) => ({ name, ms })),
    failedTests: failed,
    testExit: test.code,
    matrixExit: matrix.code,
    conformanceExit: quick.code,
  };
}

/** The crash tiers' rates: their rows and the tools' exit codes. */
export interface CrashTiers {
  rows: SuiteRow[];
  sweepExit: number;
  powerExit: number;
}

/** A short crash sweep (one leg, a sample of sequences) and a short power-loss run. */
export async function crashTiers(
  work: string,
  fixedPresent: boolean,
  log: (line: string) => void,
): Promise<CrashTiers> {
  const rows: SuiteRow[] = [];
  log("sweep (default leg, 20 sampled sequences)");
  const sweepJson = join(work, "sweep.json");
  const sweep = await timedTool("sweep/main.ts", [
    "--legs",
    "default",
    "--libraries",
    "system",
    "--sample",
    "20",
    "--json",
    sweepJson,
  ]);
  const sweepReport = await readReport<
    { run: { seconds: number }; results: { judged?: number }[] }
  >(sweepJson);
  let sweepRate: number | undefined;
  let sweepDetail = `exit ${sweep.code}`;
  if (sweepReport) {
    const states = sweepReport.results.reduce((n, r) => n + (r.judged ?? 0), 0);
    const seconds = sweepReport.run.seconds;
    sweepRate = states / seconds;
    sweepDetail = `${states} states in ${seconds.toFixed(1)} s (as the sweep prints it; ` +
      `${sweep.seconds.toFixed(1)} s wall with start-up)`;
  }
  rows.push({
    benchmark: "crash sweep, SIGKILL states checked per second",
    value: sweepRate,
    unit: "states/s",
    target: ">= 10",
    result: sweep.success ? atLeast(sweepRate, 10) : "FAIL (sweep failed)",
    detail: sweepDetail,
  });

  // WAL needs the fixed build (the system SQLite keeps new files in DELETE).
  const modes = fixedPresent ? "delete,wal" : "delete";
  log(`power-loss tier (${modes} x FULL,EXTRA, 2 runs per cell)`);
  const powerJson = join(work, "powerloss.json");
  const power = await timedTool("dev/powerloss.ts", [
    "--legs",
    modes,
    "--levels",
    "FULL,EXTRA",
    "--runs",
    "2",
    "--bench",
    "0",
    "--json",
    powerJson,
  ]);
  const powerReport = await readReport<{ cells: { statesChecked: number }[] }>(powerJson);
  let powerRate: number | undefined;
  let powerDetail = `exit ${power.code}`;
  if (powerReport) {
    const states = powerReport.cells.reduce((n, c) => n + c.statesChecked, 0);
    // The tool prints whole seconds only: the wall time (start-up included) is the figure.
    powerRate = states / power.seconds;
    powerDetail = `${states} last-sync/torn states in ${power.seconds.toFixed(1)} s wall ` +
      `(${modes} x FULL,EXTRA, 2 runs per cell)`;
  }
  rows.push({
    benchmark: "power-loss tier, crash states checked per second",
    value: powerRate,
    unit: "states/s",
    target: ">= 10",
    result: power.success ? atLeast(powerRate, 10) : "FAIL (powerloss failed)",
    detail: powerDetail,
  });
  rows.push(...await recorderRates(work, log));
  return { rows, sweepExit: sweep.code, powerExit: power.code };
}

/** A tool's JSON report of a tier (the sweep, the power-loss cells). */
type TierReport = TierOutcome & { seed?: number };

/** Runs a tier's tool with `--json` and reads its report back (undefined: it wrote none). */
async function tierTool(
  tool: string,
  args: string[],
  json: string,
): Promise<{ run: Timed; report?: TierReport; skipped?: string }> {
  const run = await timedTool(tool, [...args, "--json", json]);
  const report = await readReport<TierReport>(json);
  if (!report) return { run };
  const { verdict, why } = toolVerdict(report.results, [report.run]);
  return { run, report, ...(verdict === "SKIP" ? { skipped: why ?? "nothing judged" } : {}) };
}

/**
 * The LD_PRELOAD recorder's tiers: power-loss states checked in-process per second
 * (`deno task sweep --syscalls --power-loss --cells 1`, the append programs, every sync
 * point; `deno task powerloss-cells` on the reference store and on `node:sqlite`, every
 * cell that applies) and derived SIGKILL states per second of the syscall sweep
 * (`deno task sweep --syscalls`, programs of one operation), each read from the tool's
 * JSON report.
 */
async function recorderRates(work: string, log: (line: string) => void): Promise<SuiteRow[]> {
  const rows: SuiteRow[] = [];
  const load = () => Deno.loadavg()[0]!.toFixed(1);
  const common = ["--legs", "default", "--libraries", "system"];
  log("recorder: power-loss states in-process (sweep --syscalls --power-loss --cells 1)");
  const power = await tierTool(
    "sweep/main.ts",
    ["--syscalls", "--power-loss", "--cells", "1", ...common, "--seed", "1"],
    join(work, "sweep-power-loss.json"),
  );
  const pr = power.report && checkingRate(power.report.results);
  rows.push(rateRow(
    "recorder power-loss states checked per second, in-process",
    pr,
    1000,
    { skipped: power.skipped, success: power.run.success, failed: "sweep --syscalls --power-loss" },
    pr
      ? `${pr.states} states in ${pr.seconds.toFixed(2)} s; load average ${load()}`
      : `exit ${power.run.code}`,
  ));
  for (const target of ["cells/reference_target.ts", "targets/node_sqlite.ts"]) {
    log(`recorder: power-loss cells in-process (powerloss-cells --target ${target})`);
    const cells = await tierTool(
      "powerloss_cells.ts",
      ["--target", target, ...common],
      join(work, `powerloss-cells-${target.replace(/\W+/g, "_")}.json`),
    );
    const f = cells.report && powerLossRate(cells.report.results);
    rows.push(rateRow(
      `power-loss cells states checked per second, in-process (${target})`,
      f,
      1000,
      { skipped: cells.skipped, success: cells.run.success, failed: "powerloss-cells" },
      f
        ? `${f.states} states in ${f.seconds.toFixed(2)} s (CPU ${
          f.cpuSeconds.toFixed(2)
        } s): ${f.recovered} distinct images recovered by SQLite, the judge ran on ${f.judgedDistinct} distinct recovered contents; load average ${load()}`
        : `exit ${cells.run.code}`,
    ));
  }
  log("recorder: syscall sweep (sweep --syscalls --max-length 1)");
  const sweep = await tierTool(
    "sweep/main.ts",
    ["--syscalls", "--max-length", "1", ...common, "--seed", "1"],
    join(work, "sweep-syscalls.json"),
  );
  const sr = sweep.report && checkingRate(sweep.report.results);
  rows.push(rateRow(
    "syscall sweep, derived SIGKILL states checked per second",
    sr,
    40,
    { skipped: sweep.skipped, success: sweep.run.success, failed: "sweep --syscalls" },
    sr
      ? `${sr.states} states in ${
        sr.seconds.toFixed(2)
      } s (recording excluded); load average ${load()}`
      : `exit ${sweep.run.code}`,
  ));
  return rows;
}

/** A states-per-second row: SKIP with its reason, the rate against `min`, or FAIL (tool failed). */
function rateRow(
  benchmark: string,
  rate: { states: number; seconds: number } | undefined,
  min: number,
  run: { skipped: string | undefined; success: boolean; failed: string },
  detail: string,
): SuiteRow {
  const value = rate ? rate.states / rate.seconds : undefined;
  return {
    benchmark,
    value,
    unit: "states/s",
    target: `>= ${min}`,
    result: run.skipped
      ? `SKIP (${run.skipped})`
      : run.success
      ? atLeast(value, min)
      : `FAIL (${run.failed} failed)`,
    detail,
  };
}

/** One measurement of the writer child's memory. */
export interface WriterRun {
  vmHwmKiB: number;
  appends: number;
  seconds: number;
}

/**
 * Peak RSS of cell 1's writer child (`cells/prefix_durability/children/prefix_writer.ts` on the reference target)
 * appending for `ms`: `VmHWM` read from /proc just before the SIGKILL.
 */
export async function writerPeakRss(dir: string, ms: number): Promise<WriterRun> {
  const db = join(dir, "writer.db");
  const acks = join(dir, "writer.acks");
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "cells/prefix_durability/children/prefix_writer.ts",
      new URL("../../../cells/reference_target.ts", import.meta.url).href,
      db,
      acks,
    ],
    cwd: ROOT,
    env: childEnv(undefined),
    clearEnv: true,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const stderr = child.stderr.pipeTo(new WritableStream());
  const started = performance.now();
  try {
    // Wait (bounded) for the first acknowledgement, then let it append for `ms`.
    const deadline = started + 30_000;
    const acked = async () => ((await Deno.stat(acks).catch(() => undefined))?.size ?? 0) > 0;
    while (performance.now() < deadline && !(await acked())) {
      await new Promise((r) => setTimeout(r, 20));
    }
    if (!(await acked())) throw new Error("the writer acknowledged no append within 30 s");
    const firstAck = performance.now();
    await new Promise((r) => setTimeout(r, ms));
    // /proc/<pid>/status needs --allow-all in Deno 2, which only the children have.
    const status = await denoChild({ kind: "proc", pid: child.pid }, undefined) as {
      vmHwmKiB: number;
    };
    const lines = (await Deno.readTextFile(acks)).split("\n").filter(Boolean).length;
    return {
      vmHwmKiB: status.vmHwmKiB,
      appends: lines,
      seconds: (performance.now() - firstAck) / 1000,
    };
  } finally {
    try {
      child.kill("SIGKILL");
    } catch {
      // already gone
    }
    await child.status;
    await stderr.catch(() => {});
  }
}
