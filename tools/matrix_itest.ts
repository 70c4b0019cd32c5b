// The matrix as a user runs it: the shared flags and their usage errors, a store that
// cannot open, the soak's repetition flags with their sums, and nothing left running: a
// store's daemons that outlive the leg or the run fail it, named, and are gone after it.
import { deepStrictEqual, match, ok, strictEqual } from "node:assert/strict";
import { TASK_PERMISSIONS } from "../harness/permissions.ts";
import type { Survivor } from "../harness/process_tree.ts";
import type { Outcome } from "../runner/result.ts";
import { CELL_1_DEFAULT_SYSTEM, daemonsLeft, markedRun, runTool } from "./_test_helpers.ts";
import { DAEMONS } from "./testdata/escaping_daemon_target.ts";
import { fromFileUrl } from "../internal/path.ts";

const TOOL = new URL("./matrix.ts", import.meta.url);
const path = (relative: string) => fromFileUrl(new URL(relative, import.meta.url));
const PERMISSIONS = ["--unstable-kv", ...TASK_PERMISSIONS];
const matrix = (...args: string[]) => runTool(TOOL, args, { permissions: PERMISSIONS });

Deno.test("matrix: --help shows the shared flags and exit codes; a usage error exits 2", async () => {
  const help = await matrix("--help");
  strictEqual(help.code, 0);
  for (const flag of ["--target MODULE", "--legs LIST", "--repeat N", "--hogs N", "  2   usage"]) {
    ok(help.stdout.includes(flag), `--help lacks "${flag}":\n${help.stdout}`);
  }
  const cases: [string[], RegExp][] = [
    [["--hogs", "many"], /Invalid --hogs "many": use a whole number from 0 to 64/],
    [["--repeat", "0"], /Invalid --repeat "0": use a whole number from 1/],
    [["--seed", "-3"], /Invalid --seed "-3": use a whole number from 0/],
  ];
  for (const [args, message] of cases) {
    const run = await matrix(...args);
    strictEqual(run.code, 2, run.stderr);
    match(run.stderr, message);
    strictEqual(run.stdout, "");
  }
});

Deno.test("matrix: a store whose openStore throws fails (exit 1), its own error first", async () => {
  const json = await Deno.makeTempFile({ suffix: ".json" });
  const run = await matrix(
    "--target",
    path("../cells/testdata/faulty/open_throws.ts"),
    "--libraries",
    "system",
    "--json",
    json,
  );
  await Deno.remove(json);
  strictEqual(run.code, 1, run.stdout + run.stderr);
  ok(run.stdout.includes("FAIL store opens and writes × default × system"), run.stdout);
  match(
    run.stdout,
    /^ {2}check: openStore threw: Error: Cannot open session database "\//m,
  );
});

Deno.test("matrix --repeat 2 --hogs 1: the soak's sums over both runs", async () => {
  const json = await Deno.makeTempFile({ suffix: ".json" });
  const run = await matrix(
    ...CELL_1_DEFAULT_SYSTEM,
    "--repeat",
    "2",
    "--hogs",
    "1",
    "--json",
    json,
  );
  const report = JSON.parse(await Deno.readTextFile(json));
  await Deno.remove(json);
  strictEqual(run.code, 0, run.stdout + run.stderr);
  match(run.stdout, /^run 1: leg default × system/m);
  match(run.stdout, /^run 2: leg default × system/m);
  match(
    run.stdout,
    /^soak: 2 runs beside 1 hog\(s\) \(\d+ CPU-s\): 0 failed run\(s\); 2 PASS, 0 FAIL, 0 ERROR, 0 SKIP; \d+ SIGKILLs delivered, \d+ acknowledged operations, 0 lost$/m,
  );
  strictEqual(report.soak.runs, 2);
  ok(report.soak.sigkills > 0 && report.soak.acknowledgedOps > 0, JSON.stringify(report.soak));
});

const linux = Deno.build.os === "linux";
const escaping = path("./testdata/escaping_daemon_target.ts");

/** The matrix on cell 1, default leg, system library; its output, code and report. */
async function cell1(target: string, env: Record<string, string> = {}) {
  const json = await Deno.makeTempFile({ suffix: ".json" });
  const run = await runTool(TOOL, [
    ...["--target", target, "--cells", "1", "--legs", "default", "--libraries", "system"],
    ...["--json", json],
  ], { permissions: PERMISSIONS, env });
  const report = JSON.parse(await Deno.readTextFile(json)) as {
    results: Outcome[];
    survivors: Survivor[];
  };
  await Deno.remove(json);
  return { ...run, report };
}

Deno.test({
  name: "matrix: a store's daemons left by the tool and by a leg fail it, named, and none remains",
  ignore: !linux,
  async fn() {
    const { evidenceDir, args } = await markedRun([DAEMONS.tool, DAEMONS.test]);
    const [toolArgs, testArgs] = args;
    const run = await cell1(escaping, { CELLS_EVIDENCE_DIR: evidenceDir });
    const text = run.stdout + run.stderr;
    strictEqual(run.code, 1, text);
    // The one the tool's own import started: the run's verdict line names it.
    const [tool] = run.report.survivors;
    strictEqual(run.report.survivors.length, 1, text);
    ok(tool!.commandLine.endsWith(`sleep ${toolArgs}`), tool!.commandLine);
    ok(
      text.includes(
        `matrix: FAIL: 1 process survived the matrix run (killed now): pid ${tool!.pid}`,
      ),
      text,
    );
    // The one the test process's own open started: a FAIL of that leg, naming it.
    const leg = run.report.results.find((r) => r.clause === "no survivors")!;
    ok(leg, text);
    deepStrictEqual([leg.tier, leg.leg, leg.library, leg.status], [
      "cells",
      "default",
      "system",
      "FAIL",
    ]);
    match(leg.checks![0]!, /^no survivors: pid \d+ \(\S*sleep /);
    ok(leg.checks![0]!.includes(`sleep ${testArgs})`), leg.checks![0]);
    ok(text.includes("FAIL no survivors × default × system"), text);
    // The cell itself passed: only the survivor checks found them.
    strictEqual(run.report.results.find((r) => r.cell === 1)?.status, "PASS", text);
    deepStrictEqual(daemonsLeft(args), [], "the daemons were killed");
  },
});

Deno.test({
  name: "matrix: without a tree mechanism the same daemons outlive it (the checks can fail)",
  ignore: !linux,
  async fn() {
    const { evidenceDir, args } = await markedRun([DAEMONS.tool, DAEMONS.test]);
    const run = await cell1(escaping, {
      CELLS_EVIDENCE_DIR: evidenceDir,
      CELLS_PROCESS_TREE: "none",
    });
    const left = daemonsLeft(args, true);
    strictEqual(run.code, 0, run.stdout + run.stderr);
    deepStrictEqual(left.map((d) => d.args).sort(), [...args].sort());
  },
});

Deno.test({
  name: "matrix: a store whose setsid daemons die with it leaves nothing, and says so",
  ignore: !linux,
  async fn() {
    const run = await cell1(path("../cells/testdata/setsid_target.ts"));
    strictEqual(run.code, 0, run.stdout + run.stderr);
    deepStrictEqual(run.report.survivors, []);
    deepStrictEqual(run.report.results.map((r) => [r.clause, r.status]), [
      ["1 prefix durability", "PASS"],
    ]);
  },
});
