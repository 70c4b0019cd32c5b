/**
 * `deno task matrix`: the cells tier (`runner/cells.ts`) on every journal-mode leg ×
 * SQLite library (one run for a store on its own SQLite or on none), each leg in its own
 * `deno test` process without network access; a line per leg, the table, a JSON report,
 * exit 1 on any FAIL or ERROR. `--repeat N --hogs N` makes it a soak: the runs again and
 * again beside CPU hogs, with their sums (SIGKILLs, acknowledged operations, lost).
 *
 * Flags: `deno task matrix --help` ({@linkcode MATRIX_CLI}).
 *
 * @module
 */
import { dirname, join } from "node:path";
import { parseLeg } from "../harness/legs.ts";
import { runCells } from "../runner/cells.ts";
import { engineText } from "../runner/report_formats.ts";
import type { Outcome, TierOutcome } from "../runner/result.ts";
import { type Hogs, type SoakSums, soakSums, startHogs } from "../runner/soak.ts";
import type { Survivor } from "../harness/process_tree.ts";
import {
  axisFlags,
  checkTarget,
  endRun,
  evidenceDir,
  fail,
  FLAGS,
  jsonPath,
  type ParsedFlags,
  parseFlags,
  type RunAxis,
  runAxis,
  type SharedOptions,
  sharedOptions,
  startRun,
  type ToolSpec,
  useCellDeadline,
  writeJson,
} from "./_cli.ts";
import { cut, renderTable, terminalWidth, toolVerdict } from "./_table.ts";

/** The matrix's command line (its `--help`). */
export const MATRIX_CLI: ToolSpec = {
  usage: "deno task matrix",
  summary: `Runs every cell on every journal-mode leg for every SQLite library (once for a store
on its own SQLite or on none), each leg in its own \`deno test\` process without network
access; prints a line per leg, the PASS / FAIL / ERROR / SKIP table and writes a JSON
report. --repeat N --hogs N make it a soak: N runs beside CPU hogs, summed.`,
  flags: [
    ...axisFlags(".cache/matrix/report.json"),
    FLAGS.repeat,
    FLAGS.hogs,
    FLAGS.openDeadline,
    FLAGS.cellDeadline,
    FLAGS.noBuild,
    {
      name: "--strict",
      help:
        "fail when a requested leg was exercised by no library (e.g. wal without the fixed build)",
    },
  ],
  exitCodes: {
    0: "PASS: a cell was judged, none failed or erred, nothing acknowledged was lost",
    1: "FAIL or ERROR, SKIP (nothing judged), a loss, a process left running, or (--strict) a leg that never ran",
  },
};

/** The requested legs no library exercised (every outcome a SKIP), each with why. */
function unexercisedLegs(
  legs: readonly string[],
  unavailable: readonly { label: string; why: string }[],
  outcomes: readonly Outcome[],
): { leg: string; why: string }[] {
  return legs.flatMap((leg) => {
    const these = outcomes.filter((o) => o.leg === leg);
    if (these.some((o) => o.status !== "SKIP")) return [];
    const reasons = [
      ...unavailable.map((u) => `the ${u.label} library is not available: ${u.why}`),
      ...new Set(these.map((o) => `${o.library}: ${(o.reason ?? "").split("\n")[0]}`)),
    ];
    return [{ leg, why: reasons.join("; ") || "no library ran it" }];
  });
}

function printSums(sums: SoakSums, hogs: number, hogSeconds: number): void {
  console.log(
    `soak: ${sums.runs} runs beside ${hogs} hog(s) (${
      hogSeconds.toFixed(0)
    } CPU-s): ${sums.failedRuns.length} failed run(s); ${sums.pass} PASS, ${sums.fail} FAIL, ${sums.error} ERROR, ${sums.skip} SKIP; ${sums.sigkills} SIGKILLs delivered, ${sums.acknowledgedOps} acknowledged operations, ${sums.lost} lost`,
  );
  for (const [cell, t] of Object.entries(sums.byCell)) {
    console.log(
      `  ${cell}: ${t.pass} PASS, ${t.fail} FAIL, ${t.error} ERROR, ${t.skip} SKIP; ${t.sigkills} SIGKILLs, ${t.acknowledgedOps} acknowledged, ${t.lost} lost`,
    );
  }
}

/** What the matrix runs: its flags, the store's engine and libraries, where it reports. */
interface MatrixRun {
  flags: ParsedFlags;
  options: SharedOptions;
  json: string;
  openDeadline: number | undefined;
  axis: RunAxis;
}

/** Reads the flags, starts the run scope and probes the store: what the matrix runs on. */
async function setUp(args: string[]): Promise<MatrixRun> {
  try {
    parseLeg(Deno.env.get("SESSION_DB_JOURNAL_MODE"));
  } catch (error) {
    fail((error as Error).message);
  }
  const flags = parseFlags(MATRIX_CLI, args);
  useCellDeadline(flags);
  const options = sharedOptions(flags);
  startRun();
  const json = jsonPath(flags, ".cache/matrix/report.json");
  const openDeadline = flags.int("--open-deadline", 1);
  const widened = await checkTarget(options.target);
  if (widened.length) {
    console.log(`children widened by the target's childPermissions: ${widened.join(" ")}`);
  }
  const axis = await runAxis("matrix", options, { flags, openDeadlineMs: openDeadline });
  console.log(
    `matrix: ${options.target} runs on ${engineText(axis.engine)}; libraries ${
      axis.libraries.map((l) => l.label).join(", ")
    }`,
  );
  return { flags, options, json, openDeadline, axis };
}

/** Runs the cells on every leg × library (beside the hogs of a soak), a line per leg. */
async function runMatrix(run: MatrixRun, evidence: string, hogs: Hogs): Promise<TierOutcome> {
  const { options, axis, openDeadline } = run;
  const env: Record<string, string> = {
    CELLS_EVIDENCE_DIR: evidence,
    // The race series (off in `deno test`) runs here unless CELLS_RACE_SERIES says off.
    CELLS_RACE_SERIES: Deno.env.get("CELLS_RACE_SERIES") ?? "locks",
    ...(openDeadline !== undefined ? { CELLS_OPEN_DEADLINE_MS: String(openDeadline) } : {}),
  };
  try {
    return await runCells({
      target: options.target,
      cells: options.cells,
      legs: options.legs,
      libraries: axis.libraries,
      engine: axis.engine,
      ...(axis.openError ? { openError: axis.openError } : {}),
      jobs: options.jobs,
      repeat: options.repeat,
      ...(options.seed !== undefined ? { seed: options.seed } : {}),
      env,
      attachDir: join(dirname(run.json), "attachments"),
      onLeg(legRun, outcomes, seconds) {
        const n = (s: string) => outcomes.filter((o) => o.status === s).length;
        const counts = ["PASS", "FAIL", "ERROR", "SKIP"].filter(n).map((s) => `${n(s)} ${s}`);
        console.log(
          `${
            options.repeat > 1 ? `run ${legRun.run}: ` : ""
          }leg ${legRun.leg} × ${legRun.library.label} (${outcomes[0]?.sqliteVersion ?? "?"}): ${
            counts.join(", ")
          } in ${seconds.toFixed(1)} s`,
        );
      },
    });
  } finally {
    await hogs.stop();
  }
}

/** Prints the table, the soak's sums and the verdict, writes the JSON; the exit code. */
async function report(
  run: MatrixRun,
  tier: TierOutcome,
  ended: { survivors: Survivor[]; seconds: number; evidence: string; hogs: Hogs },
): Promise<number> {
  const { options, axis, json } = run;
  const { survivors, seconds, hogs } = ended;
  const outcomes = tier.results;
  const shown = options.repeat > 1 ? outcomes.filter((o) => o.status !== "PASS") : outcomes;
  console.log(`\n${renderTable(shown, { width: terminalWidth() })}\n`);
  const n = (s: string) => outcomes.filter((o) => o.status === s).length;
  const unexercised = unexercisedLegs(options.legs, axis.unavailable, outcomes);
  const sums = options.repeat > 1 || options.hogs ? soakSums(outcomes, options.repeat) : undefined;
  await writeJson(json, {
    date: new Date().toISOString(),
    target: options.target,
    engine: axis.engine,
    seconds: Number(seconds.toFixed(1)),
    libraries: axis.libraries,
    counts: { PASS: n("PASS"), FAIL: n("FAIL"), ERROR: n("ERROR"), SKIP: n("SKIP") },
    evidenceDir: ended.evidence,
    unexercised,
    survivors,
    ...(sums ? { soak: { ...sums, hogs: options.hogs, hogCpuSeconds: hogs.cpuSeconds() } } : {}),
    results: outcomes,
  });
  if (sums) printSums(sums, options.hogs, hogs.cpuSeconds());
  for (const leg of unexercised) {
    console.log(`matrix: leg ${leg.leg} was never exercised: ${leg.why}`);
  }
  const { verdict, why } = toolVerdict(outcomes, [tier.run], survivors);
  console.log(
    `matrix: ${verdict}${why ? ` (${cut(why, 300)})` : ""}; ${n("PASS")} passed, ${
      n("FAIL")
    } failed, ${n("ERROR")} erred, ${n("SKIP")} skipped in ${
      seconds.toFixed(1)
    } s; report: ${json}`,
  );
  const strict = run.flags.has("--strict") && unexercised.length > 0;
  if (strict) console.log("matrix: --strict: a requested leg that never ran is a failure");
  return verdict !== "PASS" || (sums?.lost ?? 0) || strict ? 1 : 0;
}

async function main(args: string[]): Promise<number> {
  const run = await setUp(args);
  const evidence = evidenceDir();
  // Hogs end by themselves at a generous bound, or when this process dies.
  const hogs = startHogs(run.options.hogs, run.options.repeat * 3 * 60 * 60_000);
  const started = performance.now();
  const tier = await runMatrix(run, evidence, hogs);
  // Nothing the run started may still be running: a survivor fails it, named.
  const survivors = await endRun("matrix");
  const seconds = (performance.now() - started) / 1000;
  return await report(run, tier, { survivors, seconds, evidence, hogs });
}

if (import.meta.main) Deno.exit(await main(Deno.args));
