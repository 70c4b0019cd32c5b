/**
 * `deno task matrix`: every cell on every journal-mode leg (default, delete, wal) for
 * every SQLite library (the system one and the WAL-reset-fixed build), each leg in its
 * own `deno test` process without network access. Prints a progress line per leg, a
 * final PASS / FAIL / SKIP (reason) table, writes a JSON report, and exits non-zero on
 * any FAIL.
 *
 * Flags: see `deno task matrix --help` ({@linkcode MATRIX_CLI}).
 *
 * @module
 */
import { loadTarget, targetSpecifier } from "../cells/target.ts";
import { CELLS } from "../cells/register.ts";
import { exists } from "../internal/fs.ts";
import {
  fail,
  LEG_PERMISSIONS,
  legChildEnv,
  legListArg,
  parseFlags,
  type ToolSpec,
} from "./_cli.ts";
import { fileURLToPath, fileURLToPath as fromFileUrl } from "node:url";
import { basename, dirname, join, resolve } from "node:path";
import { type LegName, LEGS, parseLeg } from "../harness/legs.ts";
import { systemLibraryPath } from "../session_db/sqlite/library.ts";
import { buildFixedSqlite, fixedSqlitePath } from "./build_sqlite.ts";
import { type CellReport, readCellReports } from "../cells/cell_report.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));

interface Library {
  label: string;
  path: string;
}

interface LegRun {
  library: Library;
  leg: LegName;
}

interface Row {
  cell: number;
  title: string;
  leg: LegName;
  library: string;
  sqliteVersion: string;
  status: "PASS" | "FAIL" | "SKIP";
  detail: string;
  /** A FAIL's failed checks, each with what was expected and what was found. */
  checks?: string[];
  /** A FAIL's or SKIP's whole reason (children's stderr included). */
  reason?: string;
  evidence?: string;
}

/** The matrix's command line (its `--help`). */
export const MATRIX_CLI: ToolSpec = {
  usage: "deno task matrix",
  summary: `Runs every cell on every journal-mode leg for every SQLite library, each leg in its
own \`deno test\` process without network access; prints a progress line per leg, a
PASS / FAIL / SKIP (reason) table, and writes a JSON report.`,
  flags: [
    { name: "--legs", value: "LIST", help: "journal-mode legs", default: "default,delete,wal" },
    { name: "--libraries", value: "LIST", help: "SQLite libraries", default: "system,fixed" },
    { name: "--cells", value: "LIST", help: "cells to run", default: "1,2,3,4,5,6,7" },
    {
      name: "--target",
      value: "MODULE",
      help: "the store's target module",
      default: "the reference store",
    },
    { name: "--jobs", value: "N", help: "legs run at once", default: "2" },
    {
      name: "--json",
      value: "PATH",
      help: "the JSON report",
      default: ".cache/matrix/report.json",
    },
    { name: "--seed", value: "N", help: "replay the random choices of a run (CELLS_SEED)" },
    {
      name: "--open-deadline",
      value: "MS",
      help: "how long a store may take to open (CELLS_OPEN_DEADLINE_MS)",
      default: "30000",
    },
    { name: "--no-build", help: "do not build the fixed SQLite when it is missing" },
    {
      name: "--strict",
      help:
        "fail when a requested leg was exercised by no library (e.g. wal without the fixed build)",
    },
  ],
  exitCodes: {
    0: "no cell failed (with --strict: and every requested leg ran somewhere)",
    1: "a cell failed, or (--strict) a requested leg was never exercised",
  },
};

function parseArgs(args: string[]) {
  const flags = parseFlags(MATRIX_CLI, args);
  const target = flags.string("--target");
  const options = {
    legs: flags.has("--legs") ? legListArg(flags.string("--legs")!) : [...LEGS] as LegName[],
    libraries: flags.list("--libraries") ?? ["system", "fixed"],
    cells: (flags.list("--cells") ?? Object.keys(CELLS)).map(Number),
    target: target === undefined
      ? new URL("../cells/reference_target.ts", import.meta.url).href
      : targetSpecifier(target),
    jobs: flags.int("--jobs", 1, 64) ?? 2,
    json: resolve(flags.string("--json") ?? join(ROOT, ".cache/matrix/report.json")),
    build: !flags.has("--no-build"),
    strict: flags.has("--strict"),
    openDeadlineMs: flags.int("--open-deadline", 1),
  };
  const seed = flags.int("--seed");
  if (seed !== undefined) Deno.env.set("CELLS_SEED", String(seed)); // every leg draws from it
  for (const library of options.libraries) {
    if (library !== "system" && library !== "fixed") {
      fail(`Unknown library "${library}": use system and/or fixed`);
    }
  }
  for (const cell of options.cells) {
    if (!(cell in CELLS)) fail(`Unknown cell "${cell}": use ${Object.keys(CELLS).join(", ")}`);
  }
  return options;
}

/**
 * A target that cannot be found or loaded is one usage error naming it (not a FAIL row
 * per cell and leg).
 */
async function checkTarget(target: string): Promise<void> {
  if (target.startsWith("file:") && !exists(fromFileUrl(target))) {
    fail(`Cannot find the target module ${fromFileUrl(target)}: check the --target path`);
  }
  try {
    await loadTarget(target);
  } catch (error) {
    fail(error instanceof Error ? error.message : String(error));
  }
}

async function resolveLibraries(wanted: string[], build: boolean): Promise<Library[]> {
  const out: Library[] = [];
  if (wanted.includes("system")) {
    const system = systemLibraryPath();
    if (system) out.push({ label: "system", path: system });
    else console.error("matrix: no system libsqlite3 found; skipping the system library");
  }
  if (wanted.includes("fixed")) {
    let path: string | undefined = fixedSqlitePath();
    try {
      await Deno.stat(path);
    } catch {
      if (build) {
        console.error("matrix: building the fixed SQLite first (deno task sqlite)…");
        try {
          path = await buildFixedSqlite();
        } catch (error) {
          console.error(`matrix: ${(error as Error).message}; skipping the fixed library`);
          path = undefined;
        }
      } else {
        console.error(`matrix: ${path} is not built (deno task sqlite); skipping it`);
        path = undefined;
      }
    }
    if (path) out.push({ label: "fixed", path });
  }
  return out;
}

async function runLeg(
  run: LegRun,
  testFile: string,
  reportDir: string,
  extra: Record<string, string>,
): Promise<{ code: number; output: string; seconds: number }> {
  const env = legChildEnv(run.library.path, run.leg, { CELLS_REPORT_DIR: reportDir, ...extra });
  const started = performance.now();
  const output = await new Deno.Command(Deno.execPath(), {
    args: [
      "test",
      ...LEG_PERMISSIONS,
      testFile,
    ],
    cwd: ROOT,
    clearEnv: true,
    env,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(output.stdout) + new TextDecoder().decode(output.stderr);
  return { code: output.code, output: text, seconds: (performance.now() - started) / 1000 };
}

/** A reason on one line: each failed check and the child's first stderr lines, in order. */
function oneLine(reason: string, limit = 600): string {
  const lines = reason.split("\n").map((line) => line.trim()).filter((line) => line);
  const text = lines.join(" | ");
  return text.length > limit ? `${text.slice(0, limit - 1)}…` : text;
}

/** The failed checks of a FAIL reason (`Failed check(s):` then one per line). */
function checksOf(reason: string): string[] {
  const [head, ...rest] = reason.split("\n");
  return head?.startsWith("Failed check(s):") ? rest.filter((line) => line.trim()) : [reason];
}

function detailOf(report: CellReport): string {
  if (report.status !== "PASS") {
    return oneLine((report.reason ?? "").replace(/^Failed check\(s\):\n/, ""));
  }
  const f = report.figures;
  const parts: string[] = [];
  if (f.onDiskMode) parts.push(`on-disk ${f.onDiskMode}`);
  if (f.acknowledged !== undefined) parts.push(`ack ${f.acknowledged}`);
  if (f.recovered !== undefined) parts.push(`recovered ${f.recovered}`);
  if (f["random kill.acknowledged"] !== undefined) {
    parts.push(`rotations ack ${f["random kill.acknowledged"]}`);
  }
  const randomKill = f["random kill"] as { acknowledged?: number } | undefined;
  if (randomKill?.acknowledged !== undefined) parts.push(`steps ack ${randomKill.acknowledged}`);
  if (Array.isArray(f.crashPoints)) parts.push(`${f.crashPoints.length} crash points`);
  if (Array.isArray(f.killPoints)) parts.push(`${f.killPoints.length} kill points × 2 transports`);
  if (Array.isArray(f.exitCodes)) parts.push(`exits ${f.exitCodes.join(",")}`);
  return parts.join(", ");
}

/**
 * The requested legs that no library exercised (every cell of the leg SKIPPED, or no
 * library ran it), each with why: said out loud, and a failure under `--strict`.
 */
function unexercisedLegs(
  legs: readonly LegName[],
  wanted: readonly string[],
  libraries: readonly Library[],
  rows: readonly Row[],
): { leg: LegName; why: string }[] {
  const missing = wanted.filter((label) => !libraries.some((l) => l.label === label));
  return legs.flatMap((leg) => {
    const legRows = rows.filter((r) => r.leg === leg);
    if (legRows.some((r) => r.status !== "SKIP")) return [];
    const reasons = [
      ...missing.map((label) => `the ${label} library is not available`),
      ...[...new Set(legRows.map((r) => `${r.library}: ${(r.reason ?? r.detail).split("\n")[0]}`))],
    ];
    return [{ leg, why: reasons.join("; ") || "no library ran it" }];
  });
}

function table(rows: Row[]): string {
  const head = ["cell", "leg", "library", "SQLite", "result", "detail"];
  const body = rows.map((r) => [
    `${r.cell} ${r.title}`,
    r.leg,
    r.library,
    r.sqliteVersion,
    r.status,
    r.detail,
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd();
  return [line(head), line(widths.map((w) => "-".repeat(w))), ...body.map(line)].join("\n");
}

if (import.meta.main) {
  const envLeg = Deno.env.get("SESSION_DB_JOURNAL_MODE");
  if (envLeg) {
    try {
      parseLeg(envLeg);
    } catch (error) {
      fail((error as Error).message);
    }
  }
  const options = parseArgs(Deno.args);
  await checkTarget(options.target);
  const libraries = await resolveLibraries(options.libraries, options.build);
  if (libraries.length === 0) fail("Cannot run the matrix: no SQLite library is available");

  const work = join(ROOT, ".cache/matrix");
  await Deno.mkdir(work, { recursive: true });
  // Outside the project: its deno.json excludes .cache/ from test discovery.
  const testDir = await Deno.makeTempDir({ prefix: "matrix-" });
  const testFile = join(testDir, "matrix_test.ts");
  const cellsMod = new URL("../cells/mod.ts", import.meta.url).href;
  await Deno.writeTextFile(
    testFile,
    `import { registerCells } from ${JSON.stringify(cellsMod)};\n` +
      `await registerCells({ target: ${JSON.stringify(options.target)}, cells: ${
        JSON.stringify(options.cells)
      } });\n`,
  );

  // Every leg's evidence under one folder, listed at the end.
  const evidenceDir = Deno.env.get("CELLS_EVIDENCE_DIR") || join(ROOT, ".cache/evidence");
  const legExtra: Record<string, string> = { CELLS_EVIDENCE_DIR: evidenceDir };
  if (options.openDeadlineMs !== undefined) {
    legExtra.CELLS_OPEN_DEADLINE_MS = String(options.openDeadlineMs);
  }
  const runs: LegRun[] = libraries.flatMap((library) =>
    options.legs.map((leg) => ({ library, leg }))
  );
  const started = performance.now();
  const rows: Row[] = [];
  const attachmentsKept: string[] = [];
  let next = 0;
  const worker = async () => {
    while (next < runs.length) {
      const run = runs[next++]!;
      const reportDir = await Deno.makeTempDir({ dir: testDir, prefix: "report-" });
      const result = await runLeg(run, testFile, reportDir, legExtra);
      const { reports, attachments } = await readCellReports(reportDir);
      // The cells' plots and other attachments go beside the JSON report.
      const attachDir = join(dirname(options.json), "attachments");
      for (const path of attachments) {
        await Deno.mkdir(attachDir, { recursive: true });
        const name = `${run.library.label}-${basename(path)}`;
        await Deno.copyFile(path, join(attachDir, name));
        attachmentsKept.push(join(attachDir, name));
      }
      await Deno.remove(reportDir, { recursive: true });
      const legRows: Row[] = reports.map((r) => ({
        cell: r.cell,
        title: r.title,
        leg: run.leg,
        library: run.library.label,
        sqliteVersion: r.sqliteVersion,
        status: r.status,
        detail: detailOf(r),
        ...(r.status === "FAIL" && r.reason ? { checks: checksOf(r.reason) } : {}),
        ...(r.reason ? { reason: r.reason } : {}),
        ...(r.evidence ? { evidence: r.evidence } : {}),
      }));
      for (const cell of options.cells) {
        if (!legRows.some((r) => r.cell === cell)) {
          legRows.push({
            cell,
            title: "(no report)",
            leg: run.leg,
            library: run.library.label,
            sqliteVersion: "?",
            status: "FAIL",
            detail: `the test run reported nothing for this cell (exit ${result.code}): ${
              oneLine(result.output.trim().split("\n").slice(-12).join("\n"))
            }`,
            reason: result.output,
          });
        }
      }
      // A cell that ran but found its leg not honoured reports SKIP and fails its test
      // (never a PASS): those failures are accounted for; any other is a FAIL row.
      const skippedAfterRun = reports.filter((r) =>
        r.status === "SKIP" && r.figures.legObservations
      )
        .length;
      const failedTests = Number(
        /\| (\d+) failed/.exec(result.output.replace(/\x1b\[[0-9;]*m/g, ""))?.[1] ?? NaN,
      );
      const explained = failedTests === skippedAfterRun;
      if (result.code !== 0 && !explained && !legRows.some((r) => r.status === "FAIL")) {
        legRows.push({
          cell: 0,
          title: "test run",
          leg: run.leg,
          library: run.library.label,
          sqliteVersion: "?",
          status: "FAIL",
          detail: `deno test exited ${result.code}: ${
            oneLine(result.output.trim().split("\n").slice(-12).join("\n"))
          }`,
          reason: result.output,
        });
      }
      rows.push(...legRows);
      const counts = ["PASS", "FAIL", "SKIP"].map((s) =>
        `${legRows.filter((r) => r.status === s).length} ${s.toLowerCase()}`
      );
      console.log(
        `leg ${run.leg.padEnd(7)} on ${run.library.label.padEnd(6)} (${
          legRows[0]?.sqliteVersion ?? "?"
        }): ${counts.join(", ")} in ${result.seconds.toFixed(1)} s`,
      );
      for (const row of legRows.filter((r) => r.status === "FAIL")) {
        console.log(
          `  FAIL cell ${row.cell}${row.evidence ? ` (evidence: ${row.evidence})` : ""}:`,
        );
        const lines = (row.reason ?? row.detail).trim().split("\n");
        for (const line of lines.slice(0, 40)) console.log(`    ${line}`);
        if (lines.length > 40) {
          console.log(`    … ${lines.length - 40} more lines in ${options.json}`);
        }
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(options.jobs, runs.length) }, worker));

  const order = (r: Row) =>
    r.cell * 100 + options.legs.indexOf(r.leg) * 10 +
    libraries.findIndex((l) => l.label === r.library);
  rows.sort((a, b) => order(a) - order(b));
  const seconds = (performance.now() - started) / 1000;
  console.log(`\n${table(rows)}\n`);
  const failed = rows.filter((r) => r.status === "FAIL").length;
  const summary = {
    date: new Date().toISOString(),
    target: options.target,
    seconds: Number(seconds.toFixed(1)),
    libraries,
    pass: rows.filter((r) => r.status === "PASS").length,
    fail: failed,
    skip: rows.filter((r) => r.status === "SKIP").length,
    rows,
  };
  const unexercised = unexercisedLegs(options.legs, options.libraries, libraries, rows);
  await Deno.remove(testDir, { recursive: true });
  await Deno.mkdir(join(options.json, ".."), { recursive: true });
  await Deno.writeTextFile(
    options.json,
    JSON.stringify({ ...summary, evidenceDir, unexercised }, null, 2) + "\n",
  );
  const kept = rows.filter((r) => r.evidence);
  if (kept.length) {
    console.log(`evidence (${evidenceDir}):`);
    for (const row of kept) {
      console.log(`  cell ${row.cell} ${row.leg} ${row.library} ${row.status}: ${row.evidence}`);
    }
  }
  if (attachmentsKept.length) {
    console.log(`attachments (plots): ${dirname(attachmentsKept[0]!)}/`);
  }
  for (const leg of unexercised) {
    console.log(`matrix: leg ${leg.leg} was never exercised: ${leg.why}`);
  }
  console.log(
    `matrix: ${summary.pass} passed, ${summary.fail} failed, ${summary.skip} skipped in ${
      seconds.toFixed(1)
    } s; report: ${options.json}`,
  );
  if (options.strict && unexercised.length) {
    console.log("matrix: --strict: a requested leg that never ran is a failure");
  }
  Deno.exit(failed || (options.strict && unexercised.length) ? 1 : 0);
}
