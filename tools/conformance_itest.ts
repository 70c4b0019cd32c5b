// The front door's verdicts, run as a user runs it: usage errors exit 2; a store that
// cannot open is a FAIL (exit 1) leading with its own error; nothing judged is a SKIP
// (exit 1), never a PASS; --require-level exits 1 below the level; a store not on this
// project's binding gets no library axis.
import { deepStrictEqual, match, ok, strictEqual } from "node:assert/strict";
import { TASK_PERMISSIONS } from "../harness/permissions.ts";
import type { ConformanceReport } from "../runner/report_schema.ts";
import { CELL_1_DEFAULT_SYSTEM, daemonsLeft, markedRun, runTool } from "./_test_helpers.ts";
import { DAEMONS } from "./testdata/escaping_daemon_target.ts";
import { fromFileUrl } from "../internal/path.ts";
import { testFolder } from "../internal/_test_folder.ts";

const TOOL = new URL("./conformance.ts", import.meta.url);
const path = (relative: string) => fromFileUrl(new URL(relative, import.meta.url));

async function conformance(...args: string[]) {
  return await conformanceWith({}, ...args);
}

async function conformanceWith(env: Record<string, string>, ...args: string[]) {
  const dir = testFolder({ prefix: "conformance-test-" });
  const run = await runTool(TOOL, [
    ...args,
    "--json",
    `${dir}/report.json`,
    "--markdown",
    `${dir}/report.md`,
    "--junit",
    `${dir}/report.xml`,
  ], { permissions: ["--unstable-kv", ...TASK_PERMISSIONS], env });
  let report: ConformanceReport | undefined;
  try {
    report = JSON.parse(await Deno.readTextFile(`${dir}/report.json`));
  } catch { /* none written */ }
  await Deno.remove(dir, { recursive: true });
  return { ...run, report };
}

Deno.test("conformance: a usage error exits 2 naming the problem and the fix", async () => {
  const manifest = await Deno.makeTempFile({ suffix: ".expectations.json" });
  await Deno.writeTextFile(
    manifest,
    JSON.stringify({ expectations: [{ cell: 14, expect: "FAIL", reason: "x" }] }),
  );
  const cases: [string[], RegExp][] = [
    [["--require-level", "HIGH"], /Invalid --require-level "HIGH": use BASE, DURABLE, FULL/],
    [["--tiers", "cells,fuzz"], /Unknown tier "fuzz" in --tiers: use some of cells, sweep/],
    [["--cells", "1,14"], /Unknown cell "14" in --cells: use some of 1, 2, 3/],
    [["--legs", "fast"], /Unknown journal-mode leg "fast"/],
    [
      ["--libraries", "newest"],
      /Unknown library "newest" in --libraries: use system, fixed or a path/,
    ],
    [["--jobs", "0"], /Invalid --jobs "0": use a whole number from 1 to 64/],
    [["--frobnicate"], /Invalid argument "--frobnicate": use --target, --tiers/],
    [["--target", path("./nowhere.ts")], /Cannot find the target module .*nowhere\.ts/],
    [["--expectations", manifest], /expectations\.json: entry 0 names an unknown cell 14/],
  ];
  for (const [args, message] of cases) {
    const run = await conformance(...args);
    strictEqual(run.code, 2, `${args.join(" ")}: ${run.stderr}`);
    match(run.stderr, message);
  }
  await Deno.remove(manifest);
  const settings: [string, string][] = [
    ["CELLS_OPEN_DEADLINE_MS", "soon"],
    ["CELLS_JUDGING_DEADLINE_MS", "-5"],
    ["CELLS_SEED", "abc"],
    ["CELLS_SPAN", "fast"],
    ["CELLS_KILL_SERIES", "yes"],
    ["CELLS_RACE_SERIES", "all"],
  ];
  for (const [name, value] of settings) {
    const run = await conformanceWith({ [name]: value }, "--tiers", "cells");
    strictEqual(run.code, 2, `${name}=${value}: ${run.stderr}`);
    match(run.stderr, new RegExp(`Invalid ${name} "${value}": use `));
  }
  const file = await Deno.makeTempFile();
  const unusable = await conformanceWith(
    { CELLS_EVIDENCE_DIR: `${file}/evidence` },
    "--tiers",
    "cells",
  );
  strictEqual(unusable.code, 2, unusable.stderr);
  match(
    unusable.stderr,
    /Cannot create the evidence folder ".*\/evidence": .*: set CELLS_EVIDENCE_DIR/,
  );
  const noTemp = await conformanceWith({ TMPDIR: `${file}/tmp` }, "--tiers", "cells");
  strictEqual(noTemp.code, 2, noTemp.stderr);
  match(noTemp.stderr, /Cannot make a temporary folder in ".*\/tmp" \(TMPDIR\): .*: unset TMPDIR/);
  await Deno.remove(file);
});

// `deno task` runs a task in the project's root, keeping the folder it was typed in as
// INIT_CWD: a relative --target was looked for in the root ("Cannot find the target module").
Deno.test("conformance: its paths are read from the folder the command was typed in", async () => {
  const dir = testFolder({ prefix: "conformance-cwd-" });
  const reference = new URL("../cells/reference_target.ts", import.meta.url).href;
  await Deno.writeTextFile(`${dir}/target.ts`, `export * from "${reference}";\n`);
  const run = await runTool(TOOL, [
    "--target",
    "./target.ts",
    ...["--tiers", "cells", "--cells", "13", "--legs", "default", "--libraries", "system"],
    ...["--json", "out/r.json", "--markdown", "out/r.md", "--junit", "out/r.xml"],
  ], { permissions: ["--unstable-kv", ...TASK_PERMISSIONS], env: { INIT_CWD: dir } });
  strictEqual(run.code, 0, run.stdout + run.stderr);
  const report: ConformanceReport = JSON.parse(await Deno.readTextFile(`${dir}/out/r.json`));
  strictEqual(report.target, new URL(`file://${dir}/target.ts`).href);
  for (const file of ["r.md", "r.xml"]) ok((await Deno.stat(`${dir}/out/${file}`)).isFile, file);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("conformance: a store whose openStore throws is a FAIL (exit 1) leading with its own error", async () => {
  const run = await conformance(
    "--target",
    path("../cells/testdata/faulty/open_throws.ts"),
    "--libraries",
    "system",
  );
  strictEqual(run.code, 1, run.stdout + run.stderr);
  const own = run.report?.results[0]?.reason ?? "";
  match(
    own,
    /^openStore threw: Error: Cannot open session database ".*probe\/store\.db": the file is locked by another program/,
  );
  ok(run.stdout.includes(`the store cannot open and write: ${own.split("\n")[0]}`), run.stdout);
  ok(run.stdout.includes("FAIL store opens and writes × default × system"), run.stdout);
  match(
    run.stdout,
    /^conformance: FAIL \(1 result\(s\) failed\), level NONE; 1 FAIL in [\d.]+ s; report: /m,
  );
  strictEqual(run.report?.verdict, "FAIL");
  strictEqual(run.report?.results[0]?.reason, own);
  // The other tiers say why they did not run: the store cannot open and write.
  ok(
    run.report!.tiers.slice(1).every((t) => t.reason === `the store cannot open and write: ${own}`),
  );
  // Deadline advice only when the deadline passed with the child alive.
  ok(!run.stdout.includes("CELLS_OPEN_DEADLINE_MS"), run.stdout);
  // A FAIL whichever tiers were asked for: not a SKIP because the cells were not asked for.
  const faultsOnly = await conformance(
    "--target",
    path("../cells/testdata/faulty/open_throws.ts"),
    "--libraries",
    "system",
    "--tiers",
    "faults",
  );
  strictEqual(faultsOnly.code, 1, faultsOnly.stdout + faultsOnly.stderr);
  strictEqual(faultsOnly.report?.verdict, "FAIL", faultsOnly.stdout);
  ok(
    faultsOnly.stdout.includes("FAIL store opens and writes × default × system"),
    faultsOnly.stdout,
  );
  const hung = await conformance(
    "--target",
    path("../cells/testdata/faulty/open_hangs.ts"),
    "--libraries",
    "system",
    "--open-deadline",
    "1500",
  );
  strictEqual(hung.code, 1, hung.stdout + hung.stderr);
  // The deadline passed with the child alive: then, and only then, the deadline's advice.
  match(
    hung.report?.results[0]?.reason ?? "",
    /still running after 1500 ms \(open deadline 1500 ms: raise CELLS_OPEN_DEADLINE_MS/,
  );
});

Deno.test("conformance: nothing judged is SKIP with why (exit 1), never PASS", async () => {
  const run = await conformance(
    "--target",
    path("../cells/testdata/core_only_target.ts"),
    "--tiers",
    "sweep",
  );
  strictEqual(run.code, 1, run.stdout + run.stderr);
  match(
    run.stdout,
    /^conformance: SKIP \(every tier was skipped: cells, syscalls-crash, syscalls-power-loss, powerloss-cells, faults: not requested \(--tiers\); sweep: the target declares no crash points \(export crashPoints\(\)\)\), level NONE; no results in [\d.]+ s; /m,
  );
  strictEqual(run.report?.verdict, "SKIP");
  // The levels read the kind the tier set, never its words.
  strictEqual(run.report?.tiers.find((t) => t.tier === "sweep")?.skipKind, "no-crash-points");
});

// A store too slow for a cell's overall deadline (--cell-deadline, passed to every cell's
// process) is not judged: an ERROR of the suite, exit 1, never the store's FAIL.
Deno.test("conformance: a cell past --cell-deadline while it still moves is an ERROR", async () => {
  const run = await conformance(
    "--target",
    path("../cells/testdata/slow_target.ts"),
    "--tiers",
    "cells",
    ...CELL_1_DEFAULT_SYSTEM,
    "--cell-deadline",
    "8000",
  );
  strictEqual(run.code, 1, run.stdout + run.stderr);
  strictEqual(run.report?.verdict, "ERROR", run.stdout);
  const cell1 = run.report?.results.find((r) => r.clause.startsWith("1 "));
  strictEqual(cell1?.status, "ERROR", run.stdout);
  match(cell1?.reason ?? "", /overall deadline of 8000 ms though it kept moving/);
});

Deno.test("conformance: --require-level exits 1 below the level, 0 at it", async () => {
  const run = await conformance(
    "--tiers",
    "cells",
    ...CELL_1_DEFAULT_SYSTEM,
    "--quick",
    "--require-level",
    "DURABLE",
  );
  strictEqual(run.report?.verdict, "PASS", run.stdout);
  strictEqual(run.report?.level, "BASE", run.stdout);
  strictEqual(run.code, 1, run.stdout);
  ok(run.stdout.includes("level BASE is below the required DURABLE (--require-level)"), run.stdout);
  // The same report, merged on its own, at the level asked for: exit 0.
  const file = await Deno.makeTempFile({ suffix: ".json" });
  await Deno.writeTextFile(file, JSON.stringify(run.report));
  const merged = await conformance("--merge", file, "--require-level", "BASE");
  await Deno.remove(file);
  strictEqual(merged.code, 0, merged.stdout + merged.stderr);
});

Deno.test("conformance: a store on no SQLite runs once, labelled none, never on our libraries", async () => {
  const run = await conformance(
    "--target",
    path("../cells/testdata/jsonl_store/target.ts"),
    "--tiers",
    "cells",
    "--cells",
    "1",
    "--legs",
    "default,delete",
    "--quick",
  );
  const report = run.report!;
  strictEqual(report.capabilities[report.machines[0]!.id]?.engine.kind, "not-sqlite", run.stdout);
  ok(run.stdout.includes("libraries: none\n"), run.stdout);
  deepStrictEqual(
    report.results.map((r) => [r.cell, r.leg, r.library, r.status]),
    [[1, "default", "none", "PASS"], [1, "delete", "none", "SKIP"]],
  );
  ok(report.results.every((r) => r.sqliteVersion === undefined), run.stdout);
  strictEqual(run.code, 0, run.stdout);
});

Deno.test({
  name: "conformance: daemons a store leaves after the tool and a leg make it FAIL, named",
  ignore: Deno.build.os !== "linux",
  async fn() {
    const { evidenceDir, args } = await markedRun([DAEMONS.tool, DAEMONS.test]);
    const run = await conformanceWith(
      { CELLS_EVIDENCE_DIR: evidenceDir },
      ...["--target", path("./testdata/escaping_daemon_target.ts"), "--tiers", "cells"],
      ...["--cells", "1", "--legs", "default", "--libraries", "system", "--quick"],
    );
    const report = run.report!;
    strictEqual(run.code, 1, run.stdout + run.stderr);
    strictEqual(report.verdict, "FAIL");
    deepStrictEqual(report.survivors?.map((s) => s.commandLine.split("/").at(-1)), [
      `sleep ${args[0]}`,
    ]);
    const leg = report.results.find((r) => r.clause === "no survivors");
    deepStrictEqual([leg?.tier, leg?.leg, leg?.status], ["cells", "default", "FAIL"]);
    ok(leg!.checks![0]!.includes(`sleep ${args[1]})`), leg!.checks![0]);
    deepStrictEqual(daemonsLeft(args), [], "the daemons were killed");
  },
});
