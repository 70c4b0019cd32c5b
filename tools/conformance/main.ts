/**
 * `deno task conformance --target <module>`: every tier that applies to a target (the
 * cells on every honoured leg × library, the crash sweep, the file-system call tier in
 * crash and power-loss modes, the power-loss cells), its capabilities and level, its
 * expectations manifest applied, and one report as JSON, Markdown and JUnit XML.
 * `--merge a.json b.json …` merges reports from several machines instead.
 *
 * Flags: see `deno task conformance --help` ({@linkcode CONFORMANCE_CLI}); schema and
 * levels: docs/conformance.md.
 *
 * @module
 */
import { targetSpecifier } from "../../cells/target.ts";
import { type LegName, LEGS } from "../../harness/legs.ts";
import { fromFileUrl } from "../../internal/path.ts";
import { fail, legListArg, parseFlags, type ToolSpec } from "../_cli.ts";
import { checkTarget, resolveLibraries } from "../_matrix_run.ts";
import { detectCapabilities } from "./_capabilities.ts";
import { levelOf } from "./_levels.ts";
import { applyManifest, type Manifest, manifestPathOf, readManifest } from "./_manifest.ts";
import { mergeReports, parseReport } from "./_merge.ts";
import { widenedNote, writeReports } from "./_report.ts";
import {
  type ConformanceReport,
  countStatuses,
  type Machine,
  type Result,
  SCHEMA,
  SCHEMA_VERSION,
  type TierName,
  TIERS,
  verdictOf,
} from "./_schema.ts";
import {
  cellsTier,
  powerLossCellsTier,
  sweepTier,
  syscallsTier,
  type TierContext,
  type TierOutcome,
} from "./_tiers.ts";

const ROOT = fromFileUrl(new URL("../../", import.meta.url));

/** The tool's command line (its `--help`). */
export const CONFORMANCE_CLI: ToolSpec = {
  usage: "deno task conformance --target MODULE | --merge A.json B.json …",
  summary: `Runs every tier that applies to a target: the cells on every leg it honours x
library, the crash sweep (when it declares crash points), the file-system call tier in
crash and power-loss modes (when the recorder builds: Linux/glibc with cc), the power-loss
cells (when it is on this project's binding). Prints a line per tier, its capabilities,
level and a one-line verdict, and writes one report as JSON, Markdown and JUnit XML. A
manifest beside the target (<module>.expectations.json) turns known failures into XFAIL.
--merge joins reports from several machines into one (each row keyed by machine).`,
  flags: [
    { name: "--target", value: "MODULE", help: "the store's target module (path or URL)" },
    { name: "--tiers", value: "LIST", help: `tiers to run: ${TIERS.join(", ")}`, default: "all" },
    { name: "--legs", value: "LIST", help: "journal-mode legs", default: "default,delete,wal" },
    { name: "--libraries", value: "LIST", help: "SQLite libraries", default: "system,fixed" },
    {
      name: "--expectations",
      value: "PATH",
      help: "the expectations manifest",
      default: "<module>.expectations.json beside a file target",
    },
    {
      name: "--json",
      value: "PATH",
      help: "the JSON report",
      default: ".cache/conformance/report.json",
    },
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
      name: "--machine",
      value: "NAME",
      help: "this machine's name in the report",
      default: "CONFORMANCE_MACHINE, else os-arch-hostname",
    },
    { name: "--jobs", value: "N", help: "legs of the cells tier run at once", default: "2" },
    { name: "--quick", help: "short spans and fewer states (a smoke run, not a full verdict)" },
    { name: "--strict", help: "an XPASS (an expected failure that passed) fails the run" },
    { name: "--no-build", help: "do not build the fixed SQLite when it is missing" },
    { name: "--merge", help: "merge the report files that follow instead of running" },
  ],
  exitCodes: {
    0: "no result failed (XFAIL is expected; with --strict: and no XPASS)",
    1: "a result failed, or (--strict) an expected failure passed",
  },
};

function machineOf(name: string | undefined): Machine {
  const host = (() => {
    try {
      return Deno.hostname();
    } catch {
      return "host";
    }
  })();
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
  return { files: args.slice(at + 1, end), rest: [...args.slice(0, at), ...args.slice(end)] };
}

function outputPaths(flags: ReturnType<typeof parseFlags>) {
  const out = `${ROOT}.cache/conformance`;
  return {
    json: flags.string("--json") ?? `${out}/report.json`,
    markdown: flags.string("--markdown") ?? `${out}/report.md`,
    junit: flags.string("--junit") ?? `${out}/report.junit.xml`,
  };
}

function printSummary(report: ConformanceReport, paths: { json: string }): void {
  const counts = Object.entries(report.counts).filter(([, n]) => n).map(([s, n]) => `${n} ${s}`);
  console.log(`level: ${report.level}${report.next ? ` (next ${report.next.level} needs:` : ""}`);
  for (const line of report.next?.missing.slice(0, 8) ?? []) console.log(`  - ${line}`);
  if ((report.next?.missing.length ?? 0) > 8) {
    console.log(`  - … ${report.next!.missing.length - 8} more in ${paths.json}`);
  }
  if (report.next) console.log(")");
  for (const r of report.results.filter((r) => r.status === "FAIL" || r.status === "XPASS")) {
    console.log(`${r.status} ${r.clause} · ${r.tier} · ${r.leg} × ${r.library}: ${r.reason ?? ""}`);
    if (r.replay) console.log(`  replay: ${r.replay}`);
    if (r.evidence) console.log(`  evidence: ${r.evidence}`);
  }
  console.log(
    `conformance: ${report.verdict}, level ${report.level}; ${
      counts.join(", ")
    }; report: ${paths.json}`,
  );
}

async function merge(files: string[], args: string[]): Promise<number> {
  const flags = parseFlags(CONFORMANCE_CLI, args);
  if (!files.length) fail("Invalid --merge: name the report files to merge (a.json b.json …)");
  const reports: ConformanceReport[] = [];
  for (const file of files) {
    let text: string;
    try {
      text = await Deno.readTextFile(file);
    } catch (error) {
      return fail(`Cannot read the report ${file}: ${(error as Error).message}`);
    }
    try {
      reports.push(parseReport(file, text));
    } catch (error) {
      return fail((error as Error).message);
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
  printSummary(merged, paths);
  return merged.verdict === "PASS" ? 0 : 1;
}

async function run(args: string[]): Promise<number> {
  const flags = parseFlags(CONFORMANCE_CLI, args);
  const raw = flags.string("--target");
  if (raw === undefined) fail("Invalid arguments: --target MODULE is required (or --merge)");
  const target = targetSpecifier(raw);
  const tiers = (flags.list("--tiers") ?? [...TIERS]) as TierName[];
  for (const tier of tiers) {
    if (!TIERS.includes(tier)) fail(`Unknown tier "${tier}": use ${TIERS.join(", ")}`);
  }
  const legs = flags.has("--legs") ? legListArg(flags.string("--legs")!) : [...LEGS] as LegName[];
  const wanted = flags.list("--libraries") ?? ["system", "fixed"];
  for (const library of wanted) {
    if (library !== "system" && library !== "fixed") {
      fail(`Unknown library "${library}": use system and/or fixed`);
    }
  }
  const strict = flags.has("--strict");
  const quick = flags.has("--quick");
  const jobs = flags.int("--jobs", 1, 64) ?? 2;
  const machine = machineOf(flags.string("--machine"));
  const paths = outputPaths(flags);
  const manifestPath = flags.string("--expectations") ?? manifestPathOf(target);
  let manifest: Manifest | undefined;
  try {
    manifest = readManifest(manifestPath);
  } catch (error) {
    fail((error as Error).message);
  }
  if (flags.has("--expectations") && !manifest) {
    fail(`Cannot find the expectations manifest ${manifestPath}: check the --expectations path`);
  }
  await checkTarget(target);
  const libraries = await resolveLibraries(wanted, !flags.has("--no-build"), "conformance");
  if (!libraries.length) fail("Cannot run: no SQLite library is available (see --libraries)");

  const started = performance.now();
  console.log(`conformance: ${target}${manifest ? ` (expectations: ${manifest.path})` : ""}`);
  const caps = await detectCapabilities(target, libraries[0]!.path);
  const available = Object.entries(caps.cells).filter(([, c]) => c.available).map(([id]) => id);
  console.log(
    `capabilities: cells ${available.join(", ") || "none"}; ${caps.crashPoints} crash points; ${
      caps.sqliteFile ? "SQLite file" : "not an SQLite file"
    }; ${caps.binding ? "this project's binding" : "its own storage"}; recorder ${
      caps.recorder.ok ? "ok" : `unavailable (${caps.recorder.reason})`
    }${caps.unavailable ? `; UNAVAILABLE: ${caps.unavailable}` : ""}${widenedNote(caps)}${
      caps.scopedChildren ? `; scoped children: ${caps.scopedChildren}` : ""
    }`,
  );
  const ctx: TierContext = {
    target,
    caps,
    legs,
    libraries,
    quick,
    jobs,
    evidenceDir: Deno.env.get("CELLS_EVIDENCE_DIR") || `${ROOT}.cache/evidence`,
  };
  const runners: Record<TierName, () => Promise<TierOutcome>> = {
    "cells": () => cellsTier(ctx),
    "sweep": () => sweepTier(ctx),
    "syscalls-crash": () => syscallsTier(ctx, "crash"),
    "syscalls-power-loss": () => syscallsTier(ctx, "power-loss"),
    "powerloss-cells": () => powerLossCellsTier(ctx),
  };
  const outcomes: TierOutcome[] = [];
  for (const tier of TIERS) {
    if (!tiers.includes(tier)) {
      outcomes.push({
        run: { tier, status: "SKIP", reason: "not requested (--tiers)", seconds: 0 },
        results: [],
      });
      continue;
    }
    const outcome = await runners[tier]();
    outcomes.push(outcome);
    const n = (s: string) => outcome.results.filter((r) => r.observed === s).length;
    console.log(
      outcome.run.status === "SKIP"
        ? `tier ${tier}: SKIP (${outcome.run.reason})`
        : `tier ${tier}: ${n("PASS")} pass, ${n("FAIL")} fail, ${n("SKIP")} skip in ${
          outcome.run.seconds.toFixed(1)
        } s`,
    );
  }
  const observed = outcomes.flatMap((o) => o.results) as Result[];
  const results = applyManifest(observed, manifest);
  const tierRuns = outcomes.map((o) => o.run);
  const level = levelOf(results, tierRuns);
  const report: ConformanceReport = {
    schema: SCHEMA,
    version: SCHEMA_VERSION,
    level: level.level,
    ...(level.next ? { next: level.next } : {}),
    verdict: verdictOf(results, strict),
    target,
    date: new Date().toISOString(),
    command: `deno task conformance ${Deno.args.join(" ")}`,
    strict,
    quick,
    machines: [machine],
    capabilities: { [machine.id]: caps },
    ...(manifest ? { expectations: manifest.path } : {}),
    tiers: tierRuns,
    results,
    counts: countStatuses(results),
  };
  await writeReports(report, paths);
  console.log(`(${((performance.now() - started) / 1000).toFixed(1)} s)`);
  printSummary(report, paths);
  return report.verdict === "PASS" ? 0 : 1;
}

if (import.meta.main) {
  const { files, rest } = splitMerge(Deno.args);
  Deno.exit(files ? await merge(files, rest) : await run(rest));
}
