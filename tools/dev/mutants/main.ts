/**
 * `deno task mutants`: the kill matrix. Runs the cells against every planted mutant of
 * `cells/testdata/mutants/` (each breaking one clause, hand-written), every mutant
 * generated from the reference store's source (`generated.ts`: a transaction split at
 * each crash point, each WHERE conjunct dropped, the acknowledgement before COMMIT,
 * liveness off), and the correct-but-different store (`cells/testdata/alt_store/`): one
 * child process per target and leg. It prints the matrix (mutant × cell: caught /
 * survived / skipped / pass), the survivors, the equivalent mutants with why, and ends
 * with the mutation score over every non-equivalent mutant; it writes a JSON report.
 *
 * A SKIP is never evidence: a mutant whose intended cells skipped on every leg it ran
 * fails the task, and the score never counts a skip as caught. A mutant judged on a fixed
 * leg (the resolver that ignores the requested journal mode, judged on the delete leg)
 * runs on that leg only, where its cells must SKIP, not PASS; it is reported apart.
 *
 * Flags and exit codes: `deno task mutants --help` ({@linkcode MUTANTS_CLI}).
 *
 * @module
 */
import {
  endRun,
  fail,
  LEG_PERMISSIONS,
  legChildEnv,
  legListArg,
  parseFlags,
  startRun,
  type ToolSpec,
} from "../../_cli.ts";
import { spawnTree } from "../../../runner/_tree_child.ts";
import { survivorsMessage } from "../../../harness/process_tree.ts";
import { childOutput } from "../../../internal/child_output.ts";
import { killAtDeadline } from "../../../internal/deadline_kill.ts";
import { CELL_DEADLINE_MS } from "../../../cells/engine/run.ts";
import { fileURLToPath } from "node:url";
import { join, resolve } from "node:path";
import { currentLeg, LEGS } from "../../../harness/legs.ts";
import { systemLibraryPath } from "../../../session_db/sqlite/library.ts";
import { sqliteLibraryPath } from "../../../session_db/sqlite/mod.ts";
import { fixedSqlitePath } from "../../../runner/sqlite_build.ts";
import { oneLine } from "../../_table.ts";
import { CELLS } from "../../../cells/register.ts";
import { crashPointsSetting } from "../../../cells/contract/load_target.ts";
import {
  ALT_STORE_TARGET,
  MUTANTS,
  mutantTarget,
} from "../../../cells/testdata/mutants/catalogue.ts";
import {
  FAMILIES,
  type GeneratedSet,
  generateMutants,
} from "../../../cells/testdata/mutants/generated.ts";
import { type Job, type JobOutcome, judge, type Row, score, table } from "./_judge.ts";
import type { JobResult } from "./_worker.ts";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const CELL_IDS: readonly number[] = Object.keys(CELLS).map(Number);
const ALT = "alt_store";
// Correct stores that must raise no alarm, on every cell: the alt store, and the
// reference and the alt store with no crash points declared (as a store written elsewhere
// declares none), so that every kill series, race series and stop the cells make where a
// target declares no point runs on a store that must pass it.
const CORRECT = [
  { name: ALT, target: ALT_STORE_TARGET.href, cells: CELL_IDS },
  ...["unpointed_target.ts", "alt_store/unpointed_target.ts"].map((file) => ({
    name: file.includes("alt_store") ? "alt_store_unpointed" : "reference_unpointed",
    target: new URL(`../../../cells/testdata/${file}`, import.meta.url).href,
    cells: CELL_IDS,
    options: { raceSeries: "locks" },
  })),
];
const KINDS = ["planted", ...FAMILIES, "alt"] as const;

/** The kill matrix's command line (its `--help`). */
export const MUTANTS_CLI: ToolSpec = {
  usage: "deno task mutants",
  summary: `Runs the cells against every planted mutant of cells/testdata/mutants/, every
mutant generated from the reference store (split, where, ack-before-commit, liveness) and
the correct-but-different alt store, one child per target and leg; prints the kill matrix,
the survivors, the equivalent mutants with why, and the mutation score; writes a JSON report.`,
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
    {
      name: "--kinds",
      value: "LIST",
      help: `which targets: ${KINDS.join(", ")}`,
      default: "all",
    },
    {
      name: "--only",
      value: "LIST",
      help:
        "mutant names or generated ids (e.g. where:claimHandoff:handoff_state), or alt_store, alt_store_unpointed, reference_unpointed",
      default: "all of --kinds",
    },
    {
      name: "--cells",
      value: "WHICH",
      help:
        "all: a planted mutant meets every cell (the kill matrix); intended: only the cells meant to catch it (the verdict, sooner)",
      default: "all",
    },
    {
      name: "--crash-points",
      value: "WHICH",
      help:
        "declared: the cells kill at the crash points each target declares; none: every target is judged as declaring none, as a store written elsewhere is (by the kill, race and stop series instead)",
      default: "CELLS_CRASH_POINTS, else declared",
    },
    { name: "--jobs", value: "N", help: "targets run at once (1 to 64)", default: "2" },
    {
      name: "--json",
      value: "PATH",
      help: "the JSON report",
      default: ".cache/mutants/report.json",
    },
  ],
  exitCodes: {
    0: "every non-equivalent mutant killed by an intended cell on every leg that judged it, no false alarm on a correct store, and no harness error",
    1: "a mutant survived (or a planted one was caught for another reason), a mutant's intended cells only skipped, a declared equivalent was killed, a correct store failed a cell, or a cell ended in ERROR (the suite failed)",
  },
};

/** `--crash-points`, else `CELLS_CRASH_POINTS`, else `declared`; a bad one named as given. */
function crashPointsOf(flag: string | undefined): "declared" | "none" {
  try {
    return crashPointsSetting(flag);
  } catch (error) {
    const message = (error as Error).message;
    return fail(
      flag === undefined ? message : message.replace("CELLS_CRASH_POINTS", "--crash-points"),
    );
  }
}

function parseArgs(args: string[], generated: GeneratedSet) {
  const flags = parseFlags(MUTANTS_CLI, args);
  const json = flags.string("--json");
  const options = {
    legs: legListArg(flags.string("--legs") ?? Deno.env.get("SESSION_DB_JOURNAL_MODE") ?? ""),
    libraries: flags.list("--libraries") ?? ["current"],
    kinds: flags.list("--kinds") ?? [...KINDS],
    only: flags.list("--only"),
    cells: flags.string("--cells") ?? "all",
    crashPoints: crashPointsOf(flags.string("--crash-points")),
    jobs: flags.int("--jobs", 1, 64) ?? 2,
    json: json === undefined ? join(ROOT, ".cache/mutants/report.json") : resolve(json),
  };
  if (options.cells !== "all" && options.cells !== "intended") {
    fail(`Invalid --cells "${options.cells}": use all or intended`);
  }
  if (!options.libraries.length) fail("Invalid --libraries: use current, system and/or fixed");
  if (options.only?.length === 0) fail("Invalid --only: name at least one mutant, or alt_store");
  for (const library of options.libraries) {
    if (!["current", "system", "fixed"].includes(library)) {
      fail(`Unknown library "${library}": use current, system and/or fixed`);
    }
  }
  for (const kind of options.kinds) {
    if (!(KINDS as readonly string[]).includes(kind)) {
      fail(`Unknown kind "${kind}": use ${KINDS.join(", ")}`);
    }
  }
  const known = [
    ...MUTANTS.map((m) => m.name),
    ...generated.mutants.map((m) => m.id),
    ...CORRECT.map((c) => c.name),
  ];
  for (const name of options.only ?? []) {
    if (!known.includes(name)) {
      fail(`Unknown target "${name}": use one of ${known.slice(0, 8).join(", ")}, … (see --help)`);
    }
  }
  return options;
}

function resolveLibraries(wanted: string[]): Job["library"][] {
  const out: Job["library"][] = [];
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

async function runJob(job: Job): Promise<JobOutcome> {
  const started = performance.now();
  // The worker reports through this file: nothing is read from its console but the tail
  // of one that wrote no result.
  const resultPath = await Deno.makeTempFile({ prefix: "mutants-job-", suffix: ".json" });
  const { child, kill, settle } = spawnTree(Deno.execPath(), {
    args: [
      "run",
      ...LEG_PERMISSIONS,
      join(ROOT, "tools/dev/mutants/_worker.ts"),
      resultPath,
      job.target,
      job.cells.join(","),
      job.planted || job.generated ? "0" : "1", // keep evidence of the alt store's failures only
      // e.g. cell 7's owners for a fence mutant; a generated one is raced at lock calls
      // too (cells 3 and 4: the splits after the checks show only to a concurrent writer).
      JSON.stringify(
        job.generated ? { raceSeries: "locks" } : job.planted?.cellOptions ?? job.options ?? {},
      ),
    ],
    cwd: ROOT,
    clearEnv: true,
    env: legChildEnv(job.library.path, job.leg),
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  });
  // Each cell bounds itself; this bounds a worker that never gets to its cells' end.
  const deadlineMs = job.cells.length * CELL_DEADLINE_MS + 60_000;
  const deadline = killAtDeadline(kill, deadlineMs);
  const output = await childOutput(child);
  deadline.clear();
  const outside = await settle();
  const seconds = (performance.now() - started) / 1000;
  const written = await Deno.readTextFile(resultPath).catch(() => "");
  await Deno.remove(resultPath).catch(() => {});
  if (!written) {
    const text = (new TextDecoder().decode(output.stdout) + new TextDecoder().decode(output.stderr))
      .trim();
    const ended = deadline.passed()
      ? `had not ended after ${deadlineMs / 1000} s and was killed`
      : `exited ${output.code}`;
    return {
      cells: [],
      seconds,
      error: `the worker ${ended} without a result: ${
        text.split("\n").slice(-5).join(" | ").slice(0, 400)
      }`,
    };
  }
  const result: JobResult = JSON.parse(written);
  const survivors = [...result.survivors, ...outside];
  return {
    cells: result.cells,
    sqliteVersion: result.sqliteVersion,
    seconds,
    ...(survivors.length ? { error: survivorsMessage(survivors, "the job") } : {}),
  };
}

function printRow(row: Row): void {
  const summary = CELL_IDS.map((c) => `${c}:${row.cells[c]?.mark ?? "-"}`).join(" ");
  console.log(
    `  ${row.target.padEnd(50)} ${row.leg.padEnd(7)} ${row.library.padEnd(7)} ${
      row.verdict.padEnd(11)
    } ${summary} (${row.seconds} s)`,
  );
  for (const c of Object.values(row.cells)) {
    // A generated mutant has no clause to match: show why its cell failed.
    const caughtGenerated = row.kind === "generated" && c.mark === "caught";
    const shown = ["survived", "other", "FAIL", "ERROR"].includes(c.mark);
    if (shown || caughtGenerated) {
      console.log(
        `    cell ${c.cell} ${c.mark}: ${oneLine(c.detail ?? c.status, 600)}${
          c.evidence ? ` (evidence: ${c.evidence})` : ""
        }`,
      );
    }
  }
  if (row.error) console.log(`    ${row.error}`);
}

if (import.meta.main) {
  // Every run regenerates the set (cheap: files are rewritten only when they change), so
  // --only can name a generated id and the generator's floors are checked each time.
  const all = await generateMutants(() => false);
  const options = parseArgs(Deno.args, all);
  const libraries = resolveLibraries(options.libraries);
  startRun();
  const wanted = (name: string, kind: string) =>
    options.kinds.includes(kind) && (!options.only || options.only.includes(name));
  const generated = all.mutants.filter((m) => wanted(m.id, m.family));
  await generateMutants((id) => generated.some((m) => m.id === id));
  const jobs: Job[] = [];
  for (const library of libraries) {
    for (const leg of LEGS) {
      for (const spec of MUTANTS.filter((m) => wanted(m.name, "planted"))) {
        // A mutant judged on its own leg runs there, whatever --legs says.
        if (spec.leg ? spec.leg !== leg : !options.legs.includes(leg)) continue;
        const cells = spec.expect === "skipped" || options.cells === "intended"
          ? spec.cells
          : CELL_IDS;
        const target = mutantTarget(spec.name).href;
        jobs.push({ name: spec.name, planted: spec, target, cells, leg, library });
      }
      if (!options.legs.includes(leg)) continue;
      for (const mutant of generated) {
        // Only the intended cells: a generated mutant is judged by them alone.
        const target = mutant.target.href;
        jobs.push({
          name: mutant.id,
          generated: mutant,
          target,
          cells: mutant.cells,
          leg,
          library,
        });
      }
      for (const correct of CORRECT) {
        if (wanted(correct.name, "alt")) jobs.push({ ...correct, leg, library });
      }
    }
  }
  // The jobs' environment carries it (legChildEnv), as it carries the other cell settings.
  const { crashPoints } = options;
  Deno.env.set("CELLS_CRASH_POINTS", crashPoints);
  console.log(
    `mutants: ${jobs.length} target runs (${libraries.map((l) => l.label).join(", ")} × legs ${
      options.legs.join(", ")
    }), ${options.jobs} at a time; leg ${currentLeg().name} here; crash points ${crashPoints}`,
  );
  const started = performance.now();
  const rows: Row[] = [];
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const job = jobs[next++]!;
      const row = judge(job, await runJob(job));
      rows.push(row);
      printRow(row);
    }
  };
  await Promise.all(Array.from({ length: Math.min(options.jobs, jobs.length) }, worker));
  const seconds = (performance.now() - started) / 1000;

  const order = jobs.map((j) => `${j.library.label} ${j.leg} ${j.name}`);
  const index = (r: Row) => order.indexOf(`${r.library} ${r.leg} ${r.target}`);
  rows.sort((a, b) => index(a) - index(b));
  for (const library of libraries) {
    for (const leg of LEGS) {
      const group = rows.filter((r) => r.library === library.label && r.leg === leg);
      if (!group.length) continue;
      const version = group.find((r) => r.sqliteVersion)?.sqliteVersion ?? "?";
      console.log(`\nleg ${leg} · library ${library.label} (SQLite ${version}):\n`);
      console.log(table(group, CELL_IDS));
    }
  }
  const result = score(rows);
  const alt = rows.filter((r) => r.kind === "alt store");
  const falseAlarms = alt.filter((r) => r.verdict === "false alarm");
  const breaks = (name: string) => rows.find((r) => r.target === name)?.breaks ?? "";
  console.log(
    `\n* = an intended cell. caught: the cell failed (a planted mutant: for the intended ` +
      `reason); other: failed or skipped for another reason; survived: passed where it had to ` +
      `fail (or skip); skipped is never caught.`,
  );
  const list = (title: string, names: string[], why: (name: string) => string) => {
    if (!names.length) return;
    console.log(`\n${title} (${names.length}):`);
    for (const name of names) console.log(`  ${name}: ${why(name)}`);
  };
  list("survivors", result.survivors, breaks);
  list("not judged: every intended cell skipped (a skip is no evidence)", result.unjudged, breaks);
  list(
    "declared equivalent, yet killed (fix EQUIVALENT in generated.ts)",
    result.wronglyEquivalent,
    breaks,
  );
  list(
    "harness errors (the suite failed: no verdict, never a catch; fix the cell or the run)",
    result.errored,
    (name) => {
      const row = rows.find((r) => `${r.target} (${r.library} ${r.leg})` === name);
      const cells = Object.values(row?.cells ?? {}).filter((c) => c.mark === "ERROR");
      return [row?.error, ...cells.map((c) => `cell ${c.cell}: ${oneLine(c.detail ?? "", 600)}`)]
        .filter(Boolean).join("; ");
    },
  );
  const equivalents = all.mutants.filter((m) => m.equivalent);
  console.log(`\nequivalent mutants, not scored (${equivalents.length}):`);
  for (const reason of new Set(equivalents.map((m) => m.equivalent!))) {
    console.log(`  ${reason}:`);
    for (const m of equivalents.filter((e) => e.equivalent === reason)) {
      console.log(
        `    ${m.id}${result.equivalents.includes(m.id) ? " (ran: no cell failed)" : ""}`,
      );
    }
  }
  console.log(
    `\nout of scope, not generated (no cell exercises the method): ${
      all.outOfScope.map((o) => `${o.method} (${o.ids.length})`).join(", ") || "none"
    }`,
  );
  if (result.legSkipped.length || result.legFailed.length) {
    console.log(
      `\nleg mutants (their cells must SKIP the leg they break, never PASS; not counted as caught): ${result.legSkipped.length}/${
        result.legSkipped.length + result.legFailed.length
      } skipped as required${
        result.legFailed.length ? `; not skipped: ${result.legFailed.join(", ")}` : ""
      }`,
    );
  }
  // Each summary only for what ran: a run of the correct stores alone has no score.
  if (alt.length) {
    console.log(
      `correct stores (alt store; reference and alt store without crash points, every cell, raced): ${
        alt.length - falseAlarms.length
      }/${alt.length} runs without a false alarm`,
    );
  }
  const judged = Object.values(result.perFamily).reduce((n, f) => n + f.judged, 0);
  const families = Object.entries(result.perFamily).map(([f, s]) => `${f} ${s.killed}/${s.judged}`);
  const report = {
    date: new Date().toISOString(),
    seconds: Number(seconds.toFixed(1)),
    legs: options.legs,
    libraries,
    crashPoints,
    score: { killed: result.killed.length, judged, perFamily: result.perFamily },
    ...result,
    outOfScope: all.outOfScope,
    falseAlarms: falseAlarms.map((r) => ({ leg: r.leg, library: r.library })),
    rows,
  };
  await Deno.mkdir(join(options.json, ".."), { recursive: true });
  await Deno.writeTextFile(options.json, JSON.stringify(report, null, 2) + "\n");
  if (rows.length > alt.length) {
    console.log(
      `mutation score: ${result.killed.length}/${judged} (${
        judged ? (result.killed.length / judged * 100).toFixed(0) : 0
      } %) non-equivalent mutants killed by an intended cell on every leg that judged them; ${
        families.join(", ")
      }; ${result.equivalents.length + result.wronglyEquivalent.length} equivalent run apart`,
    );
  }
  console.log(`${seconds.toFixed(1)} s; report: ${options.json}`);
  const left = await endRun("mutants");
  const failed = result.survivors.length || result.unjudged.length ||
    result.wronglyEquivalent.length || result.legFailed.length || falseAlarms.length ||
    result.errored.length || left.length;
  Deno.exit(failed ? 1 : 0);
}
