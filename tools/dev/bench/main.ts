/**
 * `deno task bench`: the performance bench of the FFI SQLite binding and of `SessionDB`,
 * against `node:sqlite` (Deno's built-in, on its bundled SQLite) and Python's `sqlite3`.
 *
 * 1. Durable appends, one transaction per append, per journal mode and synchronous
 *    policy: `SessionDB` vs Python `sqlite3` on the same library vs `node:sqlite`, all
 *    running the store's statements and pragmas, beside the disk's fsync rate (the
 *    physical bound of a one-sync commit).
 * 2. Statement rates: the binding vs `node:sqlite`, same SQL (prepared INSERT of
 *    100k rows in one transaction, point SELECT by rowid, 100-row SELECT).
 * 3. Batch appends (100 messages per `appendMessages` transaction).
 * 4. Wall time of `deno test -A`, `deno task matrix` and `deno task conformance --quick`
 *    on the reference (skipped by `--no-suite`), crash states per second of a short sweep
 *    and a short power-loss run, and the peak RSS
 *    (`VmHWM`) of cell 1's writer child.
 *
 * Every measurement runs in a child process (`_worker.ts` or `_python_worker.py`), so
 * that one process never opens a database file with two different SQLite copies. In a
 * round of appends every implementation's child runs at once and they take turns in
 * slices (`_protocol.ts`); the median over rounds is reported, ratios pair by pair.
 *
 * Flags: see `deno task bench --help` ({@linkcode BENCH_CLI}).
 *
 * @module
 */
import { dirname, resolve } from "node:path";
import { median } from "../../../internal/stats.ts";
import { fixedSqlitePath } from "../../../runner/sqlite_build.ts";
import { endRun, parseFlags, startRun, type ToolSpec } from "../../_cli.ts";
import { BENCH_DIR, type Config, DEFAULT_JSON, FULL_CONFIG, QUICK_CONFIG } from "./_config.ts";
import type { InfoResult } from "./_jobs.ts";
import { denoChild, type Lib, pythonChild } from "./_children.ts";
import { cpuModel, fsyncRate, isFile } from "./_machine.ts";
import { Rounds } from "./_measure.ts";
import { batchSection, durableSection, type SectionSetup, statementSection } from "./_sections.ts";
import {
  cpuPerMessageUs,
  printCpuPerMessage,
  printSuiteTable,
  printTable,
  rowRatio,
  type SuiteRow,
  type TableRow,
} from "./_report.ts";
import { crashTiers, suiteWallTimes, writerPeakRss, type WriterRun } from "./_suite.ts";
import { below, PARITY_FLOOR, spread } from "./_statistics.ts";

/** The bench's command line (its `--help`). */
export const BENCH_CLI: ToolSpec = {
  usage: "deno task bench",
  summary: `Measures durable appends (SessionDB vs Python's sqlite3 vs node:sqlite), statement
rates (the binding vs node:sqlite), batch appends, the suite's wall time, the crash tiers'
rates and the writer child's memory, each in its own child process; prints one report and
writes it as JSON. About 5 minutes; the targets are benchmarks, never timed tests.`,
  flags: [
    { name: "--quick", help: "a smoke run: one round, short runs" },
    {
      name: "--rounds",
      value: "N",
      help: "rounds per measurement, 1 to 100",
      default: "5; 1 with --quick",
    },
    {
      name: "--no-suite",
      help: "skip the timing of deno test -A, the matrix and conformance --quick",
    },
    { name: "--json", value: "PATH", help: "the JSON report", default: ".cache/bench/bench.json" },
  ],
  exitCodes: {
    0: "the bench ran (its verdicts are in the report)",
    1: "a measurement failed (a child crashed or answered wrongly), or a process outlived it",
  },
};

interface Options {
  quick: boolean;
  suite: boolean;
  json: string;
  config: Readonly<Config>;
}

function parseArgs(args: string[]): Options {
  const flags = parseFlags(BENCH_CLI, args);
  const quick = flags.has("--quick");
  const rounds = flags.int("--rounds", 1, 100);
  const base = quick ? QUICK_CONFIG : FULL_CONFIG;
  // `deno task` runs in the project root; INIT_CWD is where it was started.
  const cwd = Deno.env.get("INIT_CWD") ?? Deno.cwd();
  const json = flags.string("--json");
  return {
    quick,
    suite: !flags.has("--no-suite"),
    json: json === undefined ? DEFAULT_JSON : resolve(cwd, json),
    config: rounds === undefined ? base : { ...base, rounds },
  };
}

/** The versions each side runs, from children (this process opens no database). */
async function versions(fixedPresent: boolean, log: (line: string) => void) {
  const system = await denoChild({ kind: "info", impl: "binding" }, "system") as InfoResult;
  const fixed = fixedPresent
    ? await denoChild({ kind: "info", impl: "binding" }, "fixed") as InfoResult
    : undefined;
  const node = await denoChild({ kind: "info", impl: "node" }, undefined) as InfoResult;
  let python: InfoResult | undefined;
  try {
    python = await pythonChild({ kind: "info" }) as InfoResult;
  } catch (error) {
    log(`python3 unavailable, its column stays empty: ${(error as Error).message}`);
  }
  return { system, fixed, node, python, binding: fixed ?? system };
}

/** The notes under the tables: what each figure is. */
function notes(
  info: Awaited<ReturnType<typeof versions>>,
  config: Readonly<Config>,
  suite: boolean,
): string[] {
  const sys = info.system.sqlite;
  return [
    `ours: §2 the FFI binding on SQLite ${info.binding.sqlite} vs node:sqlite ${info.node.sqlite}, ` +
    "same SQL, objects per row on both sides.",
    `§1 and §3: SessionDB on the system SQLite ${sys}, the library Python uses; node:sqlite runs ` +
    `its own ${info.node.sqlite}. Every implementation runs the store's statements and ` +
    "pragmas on the store's schema: BEGIN IMMEDIATE; SELECT end_reason (x100: the whole session row); INSERT INTO messages; " +
    "UPDATE sessions SET message_count; COMMIT.",
    "* SessionDB has no option for the synchronous level (FULL in WAL and EXTRA in DELETE " +
    "are fixed), so the extra rows run the store's SQL on the bare binding.",
    `WAL on ${sys}: the store keeps a new file in DELETE (WAL-reset gate), so the bench ` +
    "puts the empty file in WAL with the same library before SessionDB opens it.",
    `ours/Py, ours/node: the median of the per-round ratios; in a round every ` +
    `implementation runs at once, each idle but for its turn, and they take ${config.slices} ` +
    "turns each in rotating order, so the disk's drift within a round hits them alike. " +
    `Diagnostics of the same rounds: Python on ${info.fixed?.sqlite ?? "the fixed build"} ` +
    "(LD_PRELOAD) beside SessionDB on it; Python with 5 idle threads (a Deno process's " +
    "count besides its main thread: every fd syscall then pays for a shared file table); " +
    "Python against itself (A/A): how far from 1.00x the method reads when nothing differs. " +
    "spread: (max - min) / median of the rounds, the largest in the row. fsync/txn: the " +
    "disk's fsync rate (median of 3 samples) / the commit rate: fsync-equivalents per commit.",
    `Py >= 1.0 on durable appends: a ratio below 1.0 passes as "parity within resolution" ` +
    `when it is at least ${PARITY_FLOOR}x and not below the A/A control's ratio minus the ` +
    "spread of its per-round ratios (shown as its target; with one round, the ratio alone).",
    "tmpfs rows: the same runs on /dev/shm, where fsync is free: what is left is CPU.",
    "§4: wall times of child processes (start-up included), one run each; the sweep runs " +
    "the default leg with 20 sampled sequences, the power-loss tier 2 runs per cell. " +
    `${suite ? "" : "--no-suite: deno test, the matrix and conformance --quick were not run. "}` +
    "Targets are benchmarks, never timed tests.",
  ];
}

/** What every phase of a bench run reads: its options, folders and the versions. */
interface BenchRun {
  options: Options;
  log: (line: string) => void;
  work: string;
  shm: string | undefined;
  info: Awaited<ReturnType<typeof versions>>;
  fixedPresent: boolean;
  cpu: string;
}

/** §1 to §3: statements, durable appends and batches, with the fsync bound sampled thrice. */
async function measureTables(run: BenchRun) {
  const { options: { config }, info, work, log } = run;
  // The fsync rate: sampled at the start, before §3 and at the end (the disk drifts).
  const fsyncSamples: number[] = [];
  const sampleFsync = () => {
    log("fsync rate");
    fsyncSamples.push(fsyncRate(work, config.fsyncMs / 2));
  };
  sampleFsync();
  const rounds = new Rounds({
    config,
    python: info.python !== undefined,
    fixedSqlite: info.fixed?.sqlite,
    log,
  });
  const setup: SectionSetup = {
    config,
    rounds,
    work,
    shm: run.shm,
    systemSqlite: info.system.sqlite,
    fixedSqlite: info.fixed?.sqlite,
  };
  const bindingLib: Lib = run.fixedPresent ? "fixed" : "system";
  const statements = await statementSection(setup, bindingLib, info.binding.sqlite);
  const rows: TableRow[] = [...statements.rows, ...await durableSection(setup)];
  sampleFsync();
  rows.push(...await batchSection(setup));
  sampleFsync();
  const fsync = median(fsyncSamples);
  for (const row of rows) {
    if (row.txnPerSec !== undefined) row.fsyncsPerTxn = fsync / row.txnPerSec;
  }
  rows.push({
    section: "1",
    benchmark: "fsync: 1-byte write + fsync loop [fsyncs/s]",
    oursLabel: "disk",
    ours: fsync,
    spread: spread(fsyncSamples),
    fsyncsPerTxn: 1,
    target: "(physical bound)",
    result: "-",
  });
  // The order: durable appends (and their fsync bound), statements, batches.
  rows.sort((a, b) => a.section.localeCompare(b.section));
  return { rows, fsync, fsyncSamples, statements, rounds };
}

/** §4: the suite's wall times, the crash tiers' rates, the writer child's memory. */
async function measureSuite(run: BenchRun) {
  const { options: { config, quick, suite }, work, log } = run;
  const rows: SuiteRow[] = [];
  let details: Record<string, unknown> = { skipped: !suite };
  if (suite) {
    const { rows: wallRows, ...walls } = await suiteWallTimes(work, log);
    rows.push(...wallRows);
    details = { skipped: false, ...walls };
  }
  const tiers = await crashTiers(work, run.fixedPresent, log);
  rows.push(...tiers.rows);
  const writerRuns: WriterRun[] = [];
  for (let round = 0; round < config.rounds; round++) {
    log(`writer child peak RSS, round ${round + 1}/${config.rounds}`);
    const dir = await Deno.makeTempDir({ dir: work, prefix: "writer-" });
    writerRuns.push(await writerPeakRss(dir, quick ? 1000 : 3000));
  }
  const peakMiB = median(writerRuns.map((r) => r.vmHwmKiB / 1024));
  rows.push({
    benchmark:
      "writer child (cells/prefix_durability/children/prefix_writer.ts, reference target) peak RSS",
    value: peakMiB,
    unit: "MiB",
    target: "< 80 MB",
    result: below(peakMiB * 1.048576, 80),
    detail: `VmHWM before SIGKILL, median of ${writerRuns.length}; ${
      Math.round(median(writerRuns.map((r) => r.appends / r.seconds)))
    } appends/s while measured`,
  });
  return { rows, details, tiers, writerRuns };
}

/** The report's header: date, Deno, CPU, the SQLite each side runs, the settings. */
function headerLines(run: BenchRun): string[] {
  const { info, fixedPresent, options: { quick, config } } = run;
  return [
    "SessionDB / SQLite binding bench" + (quick ? " (--quick: short runs)" : ""),
    `date:     ${new Date().toISOString()}`,
    `deno:     ${Deno.version.deno} (v8 ${Deno.version.v8}, ${Deno.build.os}/${Deno.build.arch})`,
    `cpu:      ${run.cpu}`,
    `sqlite:   binding ${info.binding.sqlite} ${
      fixedPresent ? "(fixed build" : "(system; no fixed build, run deno task sqlite"
    }: ${info.binding.library})`,
    `          system ${info.system.sqlite} (${info.system.library})`,
    `          node:sqlite ${info.node.sqlite} (bundled in deno)`,
    `          Python ${info.python?.python ?? "n/a"} sqlite3 ${info.python?.sqlite ?? "n/a"}`,
    `settings: median of ${config.rounds} round(s), implementations alternate within a round`,
  ];
}

/** The JSON report: every figure behind the printed tables. */
function benchReport(
  run: BenchRun,
  measured: {
    tables: Awaited<ReturnType<typeof measureTables>>;
    suite: Awaited<ReturnType<typeof measureSuite>>;
    cpuUs: ReturnType<typeof cpuPerMessageUs>;
    seconds: number;
    notes: string[];
  },
) {
  const { info, options: { quick, config } } = run;
  const { tables, suite } = measured;
  return {
    date: new Date().toISOString(),
    quick,
    seconds: measured.seconds,
    deno: Deno.version,
    os: `${Deno.build.os}/${Deno.build.arch}`,
    cpu: run.cpu,
    sqlite: {
      binding: info.binding,
      system: info.system,
      fixedBuild: info.fixed ?? null,
      node: info.node,
      python: info.python ?? null,
    },
    config,
    fsyncPerSec: tables.fsync,
    fsyncSamples: tables.fsyncSamples,
    cpuPerMessageUs: measured.cpuUs,
    statements: tables.statements.runs,
    appends: tables.rounds.appendRuns,
    table: tables.rows.map((r) => ({
      ...r,
      oursPerPython: rowRatio(r, "python") ?? null,
      oursPerNode: rowRatio(r, "node") ?? null,
    })),
    notes: measured.notes,
    suite: {
      table: suite.rows,
      ...suite.details,
      sweepExit: suite.tiers.sweepExit,
      powerlossExit: suite.tiers.powerExit,
      writer: suite.writerRuns,
    },
  };
}

/** A tmpfs folder, where fsync costs nothing: the CPU cost of the same appends. */
function tmpfsDir(): Promise<string | undefined> {
  // Deno 2 wants --allow-all for /dev/shm, which only the children have.
  if (Deno.build.os !== "linux") return Promise.resolve(undefined);
  return denoChild({ kind: "tmpfs", action: "create" }, undefined).then(
    (r) => (r as { path?: string }).path,
    () => undefined,
  );
}

async function main(options: Options): Promise<void> {
  const log = (line: string) => console.error(`bench: ${line}`);
  const began = performance.now();
  await Deno.mkdir(BENCH_DIR, { recursive: true });
  const work = await Deno.makeTempDir({ dir: BENCH_DIR, prefix: "run-" });
  const shm = await tmpfsDir();
  try {
    const fixedPresent = isFile(fixedSqlitePath());
    const info = await versions(fixedPresent, log);
    const cpu = info.node.cpu ?? cpuModel();
    const run: BenchRun = { options, log, work, shm, info, fixedPresent, cpu };
    const tables = await measureTables(run);
    const suite = await measureSuite(run);

    for (const line of headerLines(run)) console.log(line);
    console.log("");
    printTable(tables.rows);
    const cpuUs = cpuPerMessageUs(tables.rounds.appendRuns);
    console.log("");
    printCpuPerMessage(cpuUs);
    console.log("");
    printSuiteTable(suite.rows);
    const seconds = (performance.now() - began) / 1000;
    const noteLines = notes(info, options.config, options.suite);
    console.log("");
    for (const note of noteLines) console.log(note);

    const report = benchReport(run, { tables, suite, cpuUs, seconds, notes: noteLines });
    await Deno.mkdir(dirname(options.json), { recursive: true });
    await Deno.writeTextFile(options.json, JSON.stringify(report, null, 2) + "\n");
    console.log(`\nwrote ${options.json} (${seconds.toFixed(0)} s)`);
  } finally {
    await Deno.remove(work, { recursive: true }).catch(() => {});
    if (shm) await denoChild({ kind: "tmpfs", action: "remove", path: shm }, undefined);
  }
}

if (import.meta.main) {
  const options = parseArgs(Deno.args);
  startRun();
  let code = 0;
  try {
    await main(options);
  } catch (error) {
    console.error(`bench: ${error instanceof Error ? error.message : String(error)}`);
    code = 1;
  }
  // Nothing the bench started may still be running: a survivor fails it, named.
  if ((await endRun("bench")).length) code = 1;
  Deno.exit(code);
}
