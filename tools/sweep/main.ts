/**
 * `deno task sweep`: the deterministic crash sweep's command line. It sweeps the SQLite
 * library this process loads ({@linkcode sweep} in `sweep.ts`), or, with `--libraries`,
 * runs itself once per library (the FFI binding loads one library per process); then
 * prints a table of every library and leg, writes a JSON report, and exits 1 when a
 * state failed or a point was not covered.
 *
 * Flags: see `deno task sweep --help` ({@linkcode SWEEP_CLI}).
 *
 * @module
 */
import { fileURLToPath } from "node:url";
import { join, resolve } from "node:path";
import { parseLeg } from "../../harness/legs.ts";
import { TASK_PERMISSIONS } from "../../harness/permissions.ts";
import { exists } from "../../internal/fs.ts";
import { systemLibraryPath } from "../../session_db/sqlite/library.ts";
import { targetSpecifier } from "../../cells/target.ts";
import { fixedSqlitePath } from "../../runner/sqlite_build.ts";
import {
  fail,
  legChildEnv,
  legListArg,
  type ParsedFlags,
  parseFlags,
  type ToolSpec,
} from "../_cli.ts";
import { parseStateId } from "./_plan.ts";
import { lastSyncImage } from "./_power_loss.ts";
import { summaryTable } from "./_report.ts";
import { REFERENCE_TARGET } from "./_run_state.ts";
import { sweep, type SweepOptions, type SweepReport } from "./sweep.ts";
import { syscallSweep } from "./_syscalls.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
/** The longest sequence `--max-length` takes: the space grows 7-fold per operation. */
const MAX_LENGTH = 5;

/** The sweep's command line (its `--help`). */
export const SWEEP_CLI: ToolSpec = {
  usage: "deno task sweep",
  summary: `Moves a SIGKILL forward one named crash point at a time (every point x occurrence,
and the bounded sequences crashed in their last operation), on every honoured journal-mode
leg, and checks every recovered state: acknowledged operations kept, the interrupted one
all-or-nothing, the owning clause, invariants, integrity and recovery determinism. A
failing state keeps its files as evidence with the command that replays it.`,
  flags: [
    {
      name: "--target",
      value: "MODULE",
      help: "the store's target module",
      default: "the reference store",
    },
    { name: "--legs", value: "LIST", help: "journal-mode legs", default: "default,delete,wal" },
    {
      name: "--libraries",
      value: "LIST",
      help: "SQLite libraries, one process each: system, fixed or a path",
      default: "the library this process loads",
    },
    {
      name: "--points",
      value: "LIST",
      help: "crash points: exact names, or method prefixes ending with ':'",
      default: "all",
    },
    {
      name: "--k",
      value: "LIST",
      help: "occurrences of each point, whole numbers >= 1",
      default: "1,2,3",
    },
    { name: "--full", help: "every sequence state instead of a sample" },
    { name: "--sample", value: "N", help: "sequence states per leg in the sample", default: "100" },
    { name: "--no-sequences", help: "only the point sweep" },
    {
      name: "--max-length",
      value: "N",
      help: `the longest sequence, 1 to ${MAX_LENGTH}`,
      default: "3",
    },
    {
      name: "--seed",
      value: "N",
      help: "the seed of the texts and the sample",
      default: "random, printed",
    },
    { name: "--state", value: "LIST", help: "replay exactly these states (ids as reported)" },
    { name: "--jobs", value: "N", help: "children in flight at once, 1 to 64", default: "2" },
    {
      name: "--json",
      value: "PATH",
      help: "the JSON report",
      default: ".cache/sweep/report.json",
    },
    {
      name: "--power-loss",
      help: "check the last-sync image (power loss) instead of the files left",
    },
    { name: "--no-summary", help: "no final table (the per-library runs of --libraries)" },
    {
      name: "--syscalls",
      help: "crash before every recorded file-system call (any store, no crash points; one leg)",
    },
    { name: "--program", value: "LIST", help: "--syscalls: only these programs (ops joined by +)" },
    { name: "--call", value: "N", help: "--syscalls: only the crash before recorded call N" },
    {
      name: "--kills",
      value: "N",
      help: "--syscalls: real SIGKILL children per program (cross-check)",
      default: "1",
    },
  ],
  exitCodes: {
    0: "every leg that ran covered every point with no failing state",
    1: "a state failed, a point was not covered, or no leg ran",
  },
};

type CliOptions = SweepOptions & {
  libraries?: string[];
  json: string;
  summary: boolean;
  powerLoss?: boolean;
};

/** A comma-separated list of whole numbers >= `min`; anything else is a usage error. */
function intList(flags: ParsedFlags, name: string, min: number): number[] | undefined {
  const list = flags.list(name);
  if (list === undefined) return undefined;
  if (!list.length) fail(`Invalid ${name} "${flags.string(name)}": use whole numbers >= ${min}`);
  return list.map((item) => {
    const value = Number(item);
    if (!/^\d+$/.test(item) || !Number.isSafeInteger(value) || value < min) {
      fail(`Invalid ${name} "${item}": use whole numbers >= ${min}, separated by commas`);
    }
    return value;
  });
}

function parseArgs(args: readonly string[]): CliOptions {
  const flags = parseFlags(SWEEP_CLI, args);
  const options: CliOptions = {
    json: resolve(flags.string("--json") ?? join(ROOT, ".cache/sweep/report.json")),
    summary: !flags.has("--no-summary"),
  };
  const target = flags.string("--target");
  if (target !== undefined) options.target = targetSpecifier(target);
  if (flags.has("--legs")) options.legs = legListArg(flags.string("--legs")!);
  const libraries = flags.list("--libraries");
  for (const label of libraries ?? []) {
    if (label !== "system" && label !== "fixed" && !label.includes("/")) {
      fail(`Unknown library "${label}": use system, fixed or a path to a SQLite shared library`);
    }
  }
  if (libraries) options.libraries = libraries;
  const points = flags.list("--points");
  if (points) options.points = points;
  const occurrences = intList(flags, "--k", 1);
  if (occurrences) options.occurrences = occurrences;
  if (flags.has("--full") && flags.has("--no-sequences")) {
    fail("Invalid arguments: --full and --no-sequences exclude each other (use one)");
  }
  if (flags.has("--full")) options.sequences = "full";
  if (flags.has("--no-sequences")) options.sequences = "none";
  const sampleSize = flags.int("--sample");
  if (sampleSize !== undefined) options.sample = sampleSize;
  const maxLength = flags.int("--max-length", 1, MAX_LENGTH);
  if (maxLength !== undefined) options.maxLength = maxLength;
  const seed = flags.int("--seed", 0, 0xffff_ffff);
  if (seed !== undefined) options.seed = seed;
  const states = flags.list("--state");
  for (const id of states ?? []) {
    try {
      parseStateId(id);
    } catch (error) {
      fail((error as Error).message);
    }
  }
  if (states) options.states = states;
  const jobs = flags.int("--jobs", 1, 64);
  if (jobs !== undefined) options.jobs = jobs;
  if (flags.has("--power-loss")) options.powerLoss = true;
  return options;
}

/** The arguments without the named flags (`--x v` and `--x=v`), for a per-library run. */
function withoutFlags(args: readonly string[], names: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (names.includes(arg)) i++; // and its value
    else if (!names.some((name) => arg.startsWith(`${name}=`))) out.push(arg);
  }
  return out;
}

function libraryPath(label: string): string | undefined {
  if (label === "fixed") return fixedSqlitePath();
  if (label === "system") return systemLibraryPath();
  return resolve(label);
}

/** Sweeps each library in its own process (same flags and seed); one report each. */
async function sweepLibraries(
  options: CliOptions & { libraries: string[]; seed: number },
  envLeg: string | undefined,
): Promise<SweepReport[]> {
  const reports: SweepReport[] = [];
  const forward = withoutFlags(Deno.args, ["--libraries", "--json", "--seed"]);
  const legsGiven = Deno.args.some((arg) => arg === "--legs" || arg.startsWith("--legs="));
  if (envLeg && !legsGiven) forward.push("--legs", options.legs!.join(","));
  for (const label of options.libraries) {
    const path = libraryPath(label);
    if (!path || !exists(path)) {
      console.error(
        `sweep: the ${label} library is not available${
          label === "fixed" ? " (build it with deno task sqlite)" : ""
        }; skipping it`,
      );
      continue;
    }
    const json = await Deno.makeTempFile({ prefix: "sweep-", suffix: ".json" });
    const status = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        ...TASK_PERMISSIONS,
        fileURLToPath(import.meta.url),
        ...forward,
        "--seed",
        String(options.seed),
        "--json",
        json,
        "--no-summary",
      ],
      cwd: ROOT,
      clearEnv: true,
      // The legs go as --legs: the child's own opens must not see SESSION_DB_JOURNAL_MODE.
      env: legChildEnv(path, "default"),
      stdout: "inherit",
      stderr: "inherit",
    }).output();
    try {
      const sub = JSON.parse(await Deno.readTextFile(json)) as { reports: SweepReport[] };
      reports.push(...sub.reports);
    } catch {
      console.error(`sweep: the ${label} library's run wrote no report (exit ${status.code})`);
      reports.push({
        target: targetSpecifier(options.target ?? REFERENCE_TARGET),
        seed: options.seed,
        library: path,
        sqliteVersion: "?",
        image: "",
        legs: [],
        states: 0,
        seconds: 0,
        statesPerSecond: 0,
        failingPoints: [],
        ok: false,
      });
    }
    await Deno.remove(json).catch(() => {});
  }
  return reports;
}

/** `--syscalls`: the sweep over recorded file-system calls; exits with its verdict. */
async function mainSyscalls(args: readonly string[]): Promise<never> {
  const flags = parseFlags(SWEEP_CLI, args);
  const legs = flags.has("--legs") ? legListArg(flags.string("--legs")!) : ["default" as const];
  if (legs.length !== 1) fail(`Invalid --legs with --syscalls: name one leg (it sweeps one)`);
  const seed = flags.int("--seed", 0, 0xffff_ffff) ?? Math.floor(Math.random() * 2 ** 31);
  const call = flags.int("--call", 1);
  const programs = flags.list("--program");
  const kills = flags.int("--kills", 0);
  const maxLength = flags.int("--max-length", 1, MAX_LENGTH);
  const target = targetSpecifier(flags.string("--target") ?? REFERENCE_TARGET);
  const report = await syscallSweep({
    target,
    leg: legs[0]!,
    seed,
    ...(call !== undefined ? { call } : {}),
    ...(programs ? { programs } : {}),
    ...(kills !== undefined ? { kills } : {}),
    ...(maxLength !== undefined ? { maxLength } : {}),
  });
  if ("skip" in report) {
    console.log(`SKIP: ${report.skip}`);
    Deno.exit(0);
  }
  console.log(
    `sweep --syscalls: ${report.states} states in ${report.seconds.toFixed(2)} s (${
      Math.round(report.statesPerSecond)
    } states/s; load average ${
      Deno.loadavg()[0]!.toFixed(2)
    }), ${report.judged} recovered states judged, ${report.programs} programs, ${report.children.run} real SIGKILL children (${report.children.failed} failed), seed ${seed}: ${
      report.ok ? "PASS" : `FAIL (${report.failures.length} failing states)`
    }`,
  );
  if (!report.ok) console.log(`replay the shortest: ${report.failures[0]!.replay}`);
  Deno.exit(report.ok ? 0 : 1);
}

if (import.meta.main) {
  if (Deno.args.includes("--syscalls")) await mainSyscalls(Deno.args);
  const options = parseArgs(Deno.args);
  if (Deno.env.get("SESSION_DB_CRASH_AT")) {
    fail("Cannot sweep: SESSION_DB_CRASH_AT is set (unset it; the sweep arms each child itself)");
  }
  const envLeg = Deno.env.get("SESSION_DB_JOURNAL_MODE");
  if (envLeg) {
    // The variable names the leg to sweep; this process's own opens pass it explicitly.
    try {
      options.legs ??= [parseLeg(envLeg)];
    } catch (error) {
      fail((error as Error).message);
    }
    Deno.env.delete("SESSION_DB_JOURNAL_MODE");
  }
  const seed = options.seed ??= Math.floor(Math.random() * 2 ** 31);
  if (options.powerLoss && !options.libraries) {
    try {
      options.crashImage = await lastSyncImage();
    } catch (error) {
      console.log(`SKIP: ${(error as Error).message}`);
      Deno.exit(0);
    }
  }
  const reports: SweepReport[] = [];
  if (!options.libraries) {
    try {
      reports.push(await sweep(options));
    } catch (error) {
      fail(error instanceof Error ? error.message : String(error));
    }
  } else {
    reports.push(
      ...await sweepLibraries({ ...options, libraries: options.libraries, seed }, envLeg),
    );
  }
  const states = reports.reduce((s, r) => s + r.states, 0);
  const seconds = reports.reduce((s, r) => s + r.seconds, 0);
  const ok = reports.length > 0 && reports.every((r) => r.ok);
  await Deno.mkdir(join(options.json, ".."), { recursive: true });
  await Deno.writeTextFile(
    options.json,
    JSON.stringify({ date: new Date().toISOString(), seed, reports }, null, 2) + "\n",
  );
  if (!options.summary) Deno.exit(ok ? 0 : 1);
  console.log(`\n${summaryTable(reports)}\n`);
  const failing = reports.flatMap((r) =>
    r.failingPoints.map((p) => `${p.point} (${p.states} states, SQLite ${r.sqliteVersion})`)
  );
  if (failing.length) console.log(`failing crash points: ${failing.join(", ")}`);
  console.log(
    `sweep${options.powerLoss ? " --power-loss" : ""}: ${states} states in ${
      seconds.toFixed(1)
    } s (${seconds ? (states / seconds).toFixed(1) : "0"} states/s), seed ${seed}, ${
      ok ? "PASS" : "FAIL"
    }; report: ${options.json}`,
  );
  Deno.exit(ok ? 0 : 1);
}
