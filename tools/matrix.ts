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
import { targetSpecifier } from "../cells/target.ts";
import { CELLS } from "../cells/register.ts";
import { fail, legListArg, parseFlags, type ToolSpec } from "./_cli.ts";
import { fileURLToPath } from "node:url";
import { dirname, join, resolve } from "node:path";
import { type LegName, LEGS, parseLeg } from "../harness/legs.ts";
import { checkTarget, resolveLibraries, runMatrix, table, unexercisedLegs } from "./_matrix_run.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));

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
  const widened = await checkTarget(options.target);
  if (widened.length) {
    console.log(`children widened by the target's childPermissions: ${widened.join(" ")}`);
  }
  const libraries = await resolveLibraries(options.libraries, options.build);
  if (libraries.length === 0) fail("Cannot run the matrix: no SQLite library is available");

  await Deno.mkdir(join(ROOT, ".cache/matrix"), { recursive: true });
  // Every leg's evidence under one folder, listed at the end.
  const evidenceDir = Deno.env.get("CELLS_EVIDENCE_DIR") || join(ROOT, ".cache/evidence");
  // The race series (off in `deno test`) runs here unless CELLS_RACE_SERIES says off.
  const legExtra: Record<string, string> = {
    CELLS_EVIDENCE_DIR: evidenceDir,
    CELLS_RACE_SERIES: "locks",
  };
  if (options.openDeadlineMs !== undefined) {
    legExtra.CELLS_OPEN_DEADLINE_MS = String(options.openDeadlineMs);
  }
  const started = performance.now();
  const { rows, attachments: attachmentsKept } = await runMatrix({
    target: options.target,
    cells: options.cells,
    legs: options.legs,
    libraries,
    jobs: options.jobs,
    env: legExtra,
    attachDir: join(dirname(options.json), "attachments"),
    onLeg(run, legRows, legSeconds) {
      const counts = ["PASS", "FAIL", "SKIP"].map((s) =>
        `${legRows.filter((r) => r.status === s).length} ${s.toLowerCase()}`
      );
      console.log(
        `leg ${run.leg.padEnd(7)} on ${run.library.label.padEnd(6)} (${
          legRows[0]?.sqliteVersion ?? "?"
        }): ${counts.join(", ")} in ${legSeconds.toFixed(1)} s`,
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
    },
  });
  const seconds = (performance.now() - started) / 1000;
  console.log(`\n${table(rows)}\n`);
  const failed = rows.filter((r) => r.status === "FAIL" || r.status === "ERROR").length;
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
