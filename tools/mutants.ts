/**
 * `deno task mutants`: the kill matrix. Runs every cell against every mutant of
 * `cells/testdata/mutants/` and against the correct-but-different store
 * (`cells/testdata/alt_store/`), one child process per target and leg, prints the
 * matrix (mutant × cell: caught / survived / skipped / pass) and the mutation score
 * (mutants caught by their intended cell for the intended reason / mutants), writes a
 * JSON report, and exits non-zero when a mutant survives its intended cell (or is
 * caught there for another reason) or the alt store fails any cell.
 *
 * A mutant judged on a fixed leg (the resolver that ignores the requested journal
 * mode, judged on the delete leg) runs on that leg only: there it must be SKIPPED, not
 * PASSED, by its cells.
 *
 * Flags and exit codes: `deno task mutants --help` ({@linkcode MUTANTS_CLI}).
 *
 * @module
 */
import {
  fail,
  LEG_PERMISSIONS,
  legChildEnv,
  legListArg,
  parseFlags,
  type ToolSpec,
} from "./_cli.ts";
import { fileURLToPath } from "node:url";
import { join, resolve } from "node:path";
import { currentLeg, type LegName, LEGS } from "../harness/legs.ts";
import { systemLibraryPath } from "../session_db/sqlite/library.ts";
import { sqliteLibraryPath } from "../session_db/sqlite/mod.ts";
import { fixedSqlitePath } from "./build_sqlite.ts";
import {
  ALT_STORE_TARGET,
  type MutantCell,
  MUTANTS,
  type MutantSpec,
  mutantTarget,
} from "../cells/testdata/mutants/catalogue.ts";
import { type JobCell, type JobResult, RESULT_MARK } from "./_mutants_worker.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const CELL_IDS: readonly MutantCell[] = [1, 2, 3, 4, 5];
const ALT = "alt_store";

/** What a matrix cell shows. */
type Mark = "caught" | "survived" | "skipped" | "pass" | "other" | "FAIL";

interface Library {
  label: string;
  path: string;
}

interface Job {
  name: string;
  spec?: MutantSpec;
  target: string;
  leg: LegName;
  library: Library;
}

interface Row {
  target: string;
  kind: "mutant" | "alt store";
  breaks?: string;
  intended: MutantCell[];
  expect?: MutantSpec["expect"];
  leg: LegName;
  library: string;
  sqliteVersion?: string;
  seconds: number;
  cells: Record<number, JobCell & { mark: Mark; intended: boolean }>;
  /** `killed`, `survived`, `not judged` (its cells skipped on this leg); alt: `ok`, `false alarm`. */
  verdict: "killed" | "survived" | "not judged" | "ok" | "false alarm";
  error?: string;
}

/** The kill matrix's command line (its `--help`). */
export const MUTANTS_CLI: ToolSpec = {
  usage: "deno task mutants",
  summary: `Runs every cell against every mutant of cells/testdata/mutants/ (stores that each
break one clause) and against the correct-but-different alt store, one child per target
and leg; prints the kill matrix and the mutation score, and writes a JSON report.`,
  flags: [
    {
      name: "--legs",
      value: "LIST",
      help: "journal-mode legs (a mutant judged on its own leg runs there only)",
      default: "SESSION_DB_JOURNAL_MODE, the leg of this process",
    },
    {
      name: "--libraries",
      value: "LIST",
      help: "current, system and/or fixed",
      default: "current, the library this process loads",
    },
    { name: "--only", value: "LIST", help: "mutant names, or alt_store", default: "all" },
    { name: "--jobs", value: "N", help: "targets run at once (1 to 64)", default: "2" },
    {
      name: "--json",
      value: "PATH",
      help: "the JSON report",
      default: ".cache/mutants/report.json",
    },
  ],
  exitCodes: {
    0: "every judged mutant killed by its intended cell, and no false alarm on the alt store",
    1: "a mutant survived its intended cell (or was caught there for another reason), or the alt store failed a cell",
  },
};

function parseArgs(args: string[]) {
  const flags = parseFlags(MUTANTS_CLI, args);
  const json = flags.string("--json");
  const options = {
    legs: legListArg(flags.string("--legs") ?? Deno.env.get("SESSION_DB_JOURNAL_MODE") ?? ""),
    libraries: flags.list("--libraries") ?? ["current"],
    only: flags.list("--only"),
    jobs: flags.int("--jobs", 1, 64) ?? 2,
    json: json === undefined ? join(ROOT, ".cache/mutants/report.json") : resolve(json),
  };
  if (!options.libraries.length) fail("Invalid --libraries: use current, system and/or fixed");
  if (options.only?.length === 0) fail("Invalid --only: name at least one mutant, or alt_store");
  for (const library of options.libraries) {
    if (!["current", "system", "fixed"].includes(library)) {
      fail(`Unknown library "${library}": use current, system and/or fixed`);
    }
  }
  const known = [...MUTANTS.map((m) => m.name), ALT];
  for (const name of options.only ?? []) {
    if (!known.includes(name)) fail(`Unknown target "${name}": use one of ${known.join(", ")}`);
  }
  return options;
}

function resolveLibraries(wanted: string[]): Library[] {
  const out: Library[] = [];
  for (const label of wanted) {
    if (label === "current") out.push({ label, path: sqliteLibraryPath() });
    else if (label === "system") {
      const system = systemLibraryPath();
      if (!system) fail("Cannot use the system library: no system libsqlite3 was found");
      out.push({ label, path: system });
    } else {
      const path = fixedSqlitePath();
      try {
        Deno.statSync(path);
      } catch {
        fail(`Cannot use the fixed library: ${path} is not built (run deno task sqlite first)`);
      }
      out.push({ label, path });
    }
  }
  return out;
}

async function runJob(
  job: Job,
): Promise<{ cells: JobCell[]; sqliteVersion?: string; seconds: number; error?: string }> {
  const env = legChildEnv(job.library.path, job.leg);
  const cells = job.spec?.expect === "skipped" ? job.spec.cells : CELL_IDS;
  const started = performance.now();
  const output = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      ...LEG_PERMISSIONS,
      join(ROOT, "tools/_mutants_worker.ts"),
      job.target,
      cells.join(","),
      job.spec ? "0" : "1", // keep evidence of the alt store's failures only
    ],
    cwd: ROOT,
    clearEnv: true,
    env,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const seconds = (performance.now() - started) / 1000;
  const stdout = new TextDecoder().decode(output.stdout);
  const line = stdout.split("\n").find((l) => l.startsWith(RESULT_MARK));
  if (!line) {
    const text = (stdout + new TextDecoder().decode(output.stderr)).trim();
    return {
      cells: [],
      seconds,
      error: `the worker exited ${output.code} without a result: ${
        text.split("\n").slice(-5).join(" | ").slice(0, 400)
      }`,
    };
  }
  const result: JobResult = JSON.parse(line.slice(RESULT_MARK.length));
  return { cells: result.cells, sqliteVersion: result.sqliteVersion, seconds };
}

/** Classifies one target's cells and gives its verdict. */
function judge(job: Job, result: Awaited<ReturnType<typeof runJob>>): Row {
  const spec = job.spec;
  const intended = [...(spec?.cells ?? [])];
  const cells: Row["cells"] = {};
  for (const c of result.cells) {
    const isIntended = intended.includes(c.cell as MutantCell);
    const matches = spec?.clause.test(c.detail ?? "") ?? false;
    let mark: Mark;
    if (!spec) mark = c.status === "FAIL" ? "FAIL" : c.status === "PASS" ? "pass" : "skipped";
    else if (spec.expect === "skipped" && isIntended) {
      mark = c.status === "SKIP"
        ? (matches ? "skipped" : "other")
        : c.status === "PASS"
        ? "survived"
        : "other";
    } else if (c.status === "FAIL") mark = isIntended && !matches ? "other" : "caught";
    else if (c.status === "PASS") mark = isIntended ? "survived" : "pass";
    else mark = "skipped";
    cells[c.cell] = { ...c, mark, intended: isIntended };
  }
  let verdict: Row["verdict"];
  if (!spec) {
    verdict = result.error || Object.values(cells).some((c) => c.mark === "FAIL")
      ? "false alarm"
      : "ok";
  } else if (result.error) verdict = "survived";
  else {
    const marks = intended.map((c) => cells[c]?.mark);
    const want: Mark = spec.expect === "skipped" ? "skipped" : "caught";
    if (marks.some((m) => m === "survived" || m === "other" || m === undefined)) {
      verdict = "survived";
    } else if (spec.expect === "caught" && marks.every((m) => m === "skipped")) {
      verdict = "not judged";
    } else verdict = marks.every((m) => m === want || m === "skipped") ? "killed" : "survived";
  }
  const version = result.sqliteVersion;
  return {
    target: job.name,
    kind: spec ? "mutant" : "alt store",
    ...(spec ? { breaks: spec.breaks, expect: spec.expect } : {}),
    intended,
    leg: job.leg,
    library: job.library.label,
    ...(version ? { sqliteVersion: version } : {}),
    seconds: Number(result.seconds.toFixed(1)),
    cells,
    verdict,
    ...(result.error ? { error: result.error } : {}),
  };
}

function table(rows: Row[]): string {
  const head = ["target", "cell 1", "cell 2", "cell 3", "cell 4", "cell 5", "verdict"];
  const body = rows.map((r) => [
    r.kind === "alt store" ? `${r.target} (correct)` : r.target,
    ...CELL_IDS.map((c) => {
      const cell = r.cells[c];
      if (!cell) return "-";
      return `${cell.mark}${cell.intended ? " *" : ""}`;
    }),
    r.verdict,
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd();
  return [line(head), line(widths.map((w) => "-".repeat(w))), ...body.map(line)].join("\n");
}

if (import.meta.main) {
  const options = parseArgs(Deno.args);
  const libraries = resolveLibraries(options.libraries);
  const wanted = (name: string) => !options.only || options.only.includes(name);
  const jobs: Job[] = [];
  for (const library of libraries) {
    for (const leg of LEGS) {
      for (const spec of MUTANTS.filter((m) => wanted(m.name))) {
        // A mutant judged on its own leg runs there, whatever --legs says.
        if (spec.leg ? spec.leg !== leg : !options.legs.includes(leg)) continue;
        jobs.push({ name: spec.name, spec, target: mutantTarget(spec.name).href, leg, library });
      }
      if (wanted(ALT) && options.legs.includes(leg)) {
        jobs.push({ name: ALT, target: ALT_STORE_TARGET.href, leg, library });
      }
    }
  }
  console.log(
    `mutants: ${jobs.length} target runs (${libraries.map((l) => l.label).join(", ")} × legs ${
      options.legs.join(", ")
    }), ${options.jobs} at a time; leg ${currentLeg().name} here`,
  );
  const started = performance.now();
  const rows: Row[] = [];
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const job = jobs[next++]!;
      const row = judge(job, await runJob(job));
      rows.push(row);
      const summary = CELL_IDS.map((c) => `${c}:${row.cells[c]?.mark ?? "-"}`).join(" ");
      console.log(
        `  ${job.name.padEnd(38)} ${job.leg.padEnd(7)} ${job.library.label.padEnd(7)} ${
          row.verdict.padEnd(11)
        } ${summary} (${row.seconds} s)`,
      );
      for (const c of Object.values(row.cells)) {
        if (c.mark === "survived" || c.mark === "other" || c.mark === "FAIL") {
          console.log(
            `    cell ${c.cell} ${c.mark}: ${(c.detail ?? c.status).split("\n")[0]!.slice(0, 300)}${
              c.evidence ? ` (evidence: ${c.evidence})` : ""
            }`,
          );
        }
      }
      if (row.error) console.log(`    ${row.error}`);
    }
  };
  await Promise.all(Array.from({ length: Math.min(options.jobs, jobs.length) }, worker));
  const seconds = (performance.now() - started) / 1000;

  const order = (r: Row) =>
    libraries.findIndex((l) => l.label === r.library) * 10_000 + LEGS.indexOf(r.leg) * 1000 +
    (r.kind === "alt store" ? 999 : MUTANTS.findIndex((m) => m.name === r.target));
  rows.sort((a, b) => order(a) - order(b));
  for (const library of libraries) {
    for (const leg of LEGS) {
      const group = rows.filter((r) => r.library === library.label && r.leg === leg);
      if (!group.length) continue;
      const version = group.find((r) => r.sqliteVersion)?.sqliteVersion ?? "?";
      console.log(`\nleg ${leg} · library ${library.label} (SQLite ${version}):\n`);
      console.log(table(group));
    }
  }

  // A mutant is killed when caught (or skipped, for a leg mutant) by its intended cells
  // on every leg that judged it, and judged at least once.
  const mutantNames = [...new Set(rows.filter((r) => r.kind === "mutant").map((r) => r.target))];
  const verdicts = (name: string) => rows.filter((r) => r.target === name).map((r) => r.verdict);
  // Not judged: its intended cells skipped on every leg run (cell 2 off the default leg,
  // a leg the store did not honour); it neither counts for nor against the score.
  const unjudged = mutantNames.filter((name) => verdicts(name).every((v) => v === "not judged"));
  const judged = mutantNames.filter((name) => !unjudged.includes(name));
  const killed = judged.filter((name) =>
    verdicts(name).every((v) => v === "killed" || v === "not judged")
  );
  const survivors = judged.filter((name) => !killed.includes(name));
  const alt = rows.filter((r) => r.kind === "alt store");
  const falseAlarms = alt.filter((r) => r.verdict === "false alarm");
  const perCell = Object.fromEntries(
    CELL_IDS.map((c) => [
      c,
      MUTANTS.filter((m) => m.expect === "caught" && m.cells.includes(c) && killed.includes(m.name))
        .length,
    ]),
  );
  const score = judged.length ? killed.length / judged.length : 0;
  console.log(
    `\n* = the intended cell. caught: the cell failed (for the intended reason where *); other: ` +
      `failed or skipped for another reason; survived: passed where it had to fail or skip.`,
  );
  console.log(
    `mutation score: ${killed.length}/${judged.length} (${
      (score * 100).toFixed(0)
    } %) killed by their intended cell; per cell ${
      CELL_IDS.map((c) => `${c}:${perCell[c]}`).join(" ")
    }${survivors.length ? `; survived: ${survivors.join(", ")}` : ""}${
      unjudged.length ? `; not judged on these legs: ${unjudged.join(", ")}` : ""
    }`,
  );
  console.log(
    `alt store: ${alt.length - falseAlarms.length}/${alt.length} legs without a false alarm; ${
      seconds.toFixed(1)
    } s; report: ${options.json}`,
  );
  const report = {
    date: new Date().toISOString(),
    seconds: Number(seconds.toFixed(1)),
    legs: options.legs,
    libraries,
    score: { killed: killed.length, judged: judged.length, mutants: mutantNames.length, perCell },
    survivors,
    unjudged,
    falseAlarms: falseAlarms.map((r) => ({ leg: r.leg, library: r.library })),
    rows,
  };
  await Deno.mkdir(join(options.json, ".."), { recursive: true });
  await Deno.writeTextFile(options.json, JSON.stringify(report, null, 2) + "\n");
  Deno.exit(report.survivors.length || falseAlarms.length ? 1 : 0);
}
