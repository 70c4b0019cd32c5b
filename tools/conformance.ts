/**
 * `deno task conformance --target <module>`: a store's verdict (`runner/conformance.ts`):
 * every tier that can judge it, its capabilities and level, its expectations manifest
 * applied, and one report as JSON, Markdown and JUnit XML. `--merge a.json b.json …`
 * merges reports from several machines instead.
 *
 * Flags: `deno task conformance --help` ({@linkcode CONFORMANCE_CLI}); schema and levels:
 * docs/conformance.md.
 *
 * @module
 */
import { survivorsMessage } from "../harness/process_tree.ts";
import { fromFileUrl } from "../internal/path.ts";
import {
  type ConformanceEvent,
  ConformanceSetupError,
  runConformance,
} from "../runner/conformance.ts";
import { LEVELS } from "../runner/report_schema.ts";
import { type Manifest, manifestPathOf, readManifest } from "../runner/manifest.ts";
import { MergeError, mergeReports, parseReport } from "../runner/merge.ts";
import { engineText, QUICK_NOTE, widenedNote, writeReports } from "../runner/report_formats.ts";
import type { ConformanceReport, Machine } from "../runner/report_schema.ts";
import { TIERS } from "../runner/result.ts";
import {
  checkTarget,
  endRun,
  fail,
  FLAGS,
  jsonFlag,
  type ParsedFlags,
  parseFlags,
  pathFlag,
  sharedOptions,
  startRun,
  type ToolSpec,
  useCellDeadline,
  userPath,
} from "./_cli.ts";
import { cut, renderTable, terminalWidth } from "./_table.ts";

const ROOT = fromFileUrl(new URL("../", import.meta.url));

/** The tool's command line (its `--help`). */
export const CONFORMANCE_CLI: ToolSpec = {
  usage: "deno task conformance --target MODULE | --merge A.json B.json …",
  summary: `A store's verdict: runs every tier that can judge it
(${TIERS.join(", ")}):
the cells on every leg it honours × library (one run for a store on its own SQLite or on
none), the others on the legs the cells found honoured, side by side. Prints its
capabilities, a line per leg of each tier, the results, its level and a one-line verdict
(PASS, FAIL, ERROR: the suite failed, or SKIP: nothing judged), and writes one report as
JSON, Markdown and JUnit XML. A manifest beside the target (<module>.expectations.json)
turns known failures into XFAIL. --merge joins reports from several machines into one.`,
  flags: [
    FLAGS.target,
    FLAGS.tiers,
    FLAGS.cells,
    FLAGS.legs,
    FLAGS.libraries,
    FLAGS.seed,
    FLAGS.jobs,
    FLAGS.quick,
    FLAGS.requireLevel,
    jsonFlag(".cache/conformance/report.json"),
    {
      name: "--markdown",
      value: "PATH",
      help: "the Markdown report",
      default: ".cache/conformance/report.md",
    },
    {
      name: "--junit",
      value: "PATH",
      help: "the JUnit XML report",
      default: ".cache/conformance/report.junit.xml",
    },
    {
      name: "--expectations",
      value: "PATH",
      help: "the expectations manifest",
      default: "<module>.expectations.json beside a file target",
    },
    {
      name: "--machine",
      value: "NAME",
      help: "this machine's name in the report",
      default: "CONFORMANCE_MACHINE, else os-arch-hostname",
    },
    FLAGS.openDeadline,
    FLAGS.cellDeadline,
    { name: "--strict", help: "an XPASS (an expected failure that passed) fails the run" },
    FLAGS.noBuild,
    { name: "--merge", help: "merge the report files that follow instead of running" },
  ],
  exitCodes: {
    0: "the verdict is PASS (XFAIL is expected) and the level is at least --require-level",
    1: "FAIL or ERROR, SKIP (nothing judged), a process left running, or a level below --require-level",
  },
};

function machineOf(name: string | undefined): Machine {
  let host = "host";
  try {
    host = Deno.hostname();
  } catch { /* no sys permission */ }
  return {
    id: name ?? Deno.env.get("CONFORMANCE_MACHINE") ??
      `${Deno.build.os}-${Deno.build.arch}-${host}`,
    os: Deno.build.os,
    arch: Deno.build.arch,
    deno: Deno.version.deno,
  };
}

/** Splits `--merge a.json b.json …` from the flags (parseFlags takes no stray arguments). */
function splitMerge(args: readonly string[]): { files: string[] | undefined; rest: string[] } {
  const at = args.indexOf("--merge");
  if (at < 0) return { files: undefined, rest: [...args] };
  let end = at + 1;
  while (end < args.length && !args[end]!.startsWith("--")) end++;
  return {
    files: args.slice(at + 1, end).map(userPath),
    rest: [...args.slice(0, at), ...args.slice(end)],
  };
}

function outputPaths(flags: ParsedFlags) {
  const out = `${ROOT}.cache/conformance`;
  return {
    json: pathFlag(flags, "--json") ?? `${out}/report.json`,
    markdown: pathFlag(flags, "--markdown") ?? `${out}/report.md`,
    junit: pathFlag(flags, "--junit") ?? `${out}/report.junit.xml`,
  };
}

function printReport(report: ConformanceReport, json: string, seconds?: number): void {
  const width = terminalWidth();
  if (report.results.length) {
    console.log(`\n${renderTable(report.results, { tier: true, width })}\n`);
  }
  console.log(`level: ${report.level}${report.next ? ` (next ${report.next.level} needs:` : ""}`);
  for (const line of report.next?.missing.slice(0, 8) ?? []) console.log(cut(`  - ${line}`, width));
  if ((report.next?.missing.length ?? 0) > 8) {
    console.log(`  - … ${report.next!.missing.length - 8} more in ${json}`);
  }
  if (report.next) console.log(")");
  const counts = Object.entries(report.counts).filter(([, n]) => n).map(([s, n]) => `${n} ${s}`);
  console.log(
    `conformance: ${report.verdict}${
      report.why ? ` (${cut(report.why, 300)})` : ""
    }, level ${report.level}${report.quick ? ` (${QUICK_NOTE})` : ""}; ${
      counts.join(", ") || "no results"
    }${seconds !== undefined ? ` in ${seconds.toFixed(1)} s` : ""}; report: ${json}`,
  );
}

/** The exit code: 0 for a PASS at or above the required level, else 1. */
function exitCode(report: ConformanceReport, required: string | undefined): number {
  if (
    required && LEVELS.indexOf(report.level) < LEVELS.indexOf(required as typeof LEVELS[number])
  ) {
    console.log(
      `conformance: level ${report.level} is below the required ${required} (--require-level)`,
    );
    return 1;
  }
  return report.verdict === "PASS" ? 0 : 1;
}

async function merge(files: string[], args: string[]): Promise<number> {
  const flags = parseFlags(CONFORMANCE_CLI, args);
  if (!files.length) fail("Invalid --merge: name the report files to merge (a.json b.json …)");
  const reports: ConformanceReport[] = [];
  for (const file of files) {
    try {
      reports.push(parseReport(file, await Deno.readTextFile(file)));
    } catch (error) {
      // A MergeError names the file already; a read error does not.
      fail(
        error instanceof MergeError
          ? error.message
          : `Cannot merge ${file}: ${(error as Error).message}`,
      );
    }
  }
  let merged: ConformanceReport;
  try {
    merged = mergeReports(reports, `deno task conformance ${Deno.args.join(" ")}`);
  } catch (error) {
    return fail((error as Error).message);
  }
  const paths = outputPaths(flags);
  await writeReports(merged, paths);
  console.log(`merged ${files.length} reports from ${merged.machines.length} machines`);
  printReport(merged, paths.json);
  return exitCode(merged, flags.string("--require-level"));
}

function printEvent(event: ConformanceEvent): void {
  if (event.kind === "unit") {
    const n = (s: string) => event.outcomes.filter((o) => o.status === s).length;
    const counts = ["PASS", "FAIL", "ERROR", "SKIP"].filter(n).map((s) => `${n(s)} ${s}`);
    console.log(
      `  ${event.tier}${
        event.cells ? ` (cells ${event.cells.join(",")})` : ""
      } ${event.leg} × ${event.library}: ${counts.join(", ") || "no result"} in ${
        event.seconds.toFixed(1)
      } s`,
    );
    return;
  }
  const { caps, libraries, unavailable } = event;
  const cells = Object.entries(caps.cells).filter(([, c]) => c.available).map(([id]) => id);
  console.log(cut(
    `capabilities: cells ${cells.join(", ") || "none"}; ${caps.crashPoints} crash points; ${
      caps.sqliteFile ? "SQLite file" : "not an SQLite file"
    }; runs on ${engineText(caps.engine)}; recorder ${
      caps.recorder.ok ? "ok" : `unavailable (${caps.recorder.reason})`
    }${widenedNote(caps)}${caps.scopedChildren ? `; scoped children: ${caps.scopedChildren}` : ""}`,
    terminalWidth(),
  ));
  if (caps.openError) console.log(`the store cannot open and write: ${caps.openError}`);
  console.log(
    `libraries: ${libraries.map((l) => l.label).join(", ") || "none"}${
      unavailable.map((u) => `; ${u.label} unavailable: ${u.why}`).join("")
    }`,
  );
}

async function run(args: string[]): Promise<number> {
  const flags = parseFlags(CONFORMANCE_CLI, args);
  useCellDeadline(flags);
  const shared = sharedOptions(flags);
  const manifestPath = pathFlag(flags, "--expectations") ?? manifestPathOf(shared.target);
  let manifest: Manifest | undefined;
  try {
    manifest = readManifest(manifestPath);
  } catch (error) {
    fail((error as Error).message);
  }
  if (flags.has("--expectations") && !manifest) {
    fail(`Cannot find the expectations manifest ${manifestPath}: check the --expectations path`);
  }
  startRun();
  await checkTarget(shared.target);
  const started = performance.now();
  console.log(
    `conformance: ${shared.target}${manifest ? ` (expectations: ${manifest.path})` : ""}`,
  );
  const openDeadlineMs = flags.int("--open-deadline", 1);
  let report: ConformanceReport;
  try {
    report = await runConformance({
      target: shared.target,
      tiers: shared.tiers,
      cells: shared.cells,
      legs: shared.legs,
      libraries: shared.libraries,
      build: !flags.has("--no-build"),
      quick: shared.quick,
      jobs: shared.jobs,
      strict: flags.has("--strict"),
      ...(shared.seed !== undefined ? { seed: shared.seed } : {}),
      machine: machineOf(flags.string("--machine")),
      ...(manifest ? { manifest } : {}),
      ...(openDeadlineMs !== undefined ? { openDeadlineMs } : {}),
      command: `deno task conformance ${Deno.args.join(" ")}`,
      onEvent: printEvent,
    });
  } catch (error) {
    if (error instanceof ConformanceSetupError) fail(error.message);
    throw error;
  }
  // Nothing the run started may still be running: a survivor fails it, named.
  const survivors = await endRun("conformance");
  if (survivors.length) {
    report.survivors = survivors;
    if (report.verdict !== "FAIL") {
      report.verdict = "FAIL";
      report.why = survivorsMessage(survivors, "the run");
    }
  }
  const paths = outputPaths(flags);
  await writeReports(report, paths);
  printReport(report, paths.json, (performance.now() - started) / 1000);
  return exitCode(report, shared.requireLevel);
}

if (import.meta.main) {
  const { files, rest } = splitMerge(Deno.args);
  Deno.exit(files ? await merge(files, rest) : await run(rest));
}
