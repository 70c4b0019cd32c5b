// The matrix as a user runs it: the shared flags and their usage errors, a store that
// cannot open, and the soak's repetition flags with their sums.
import { match, ok, strictEqual } from "node:assert/strict";
import { TASK_PERMISSIONS } from "../harness/permissions.ts";
import { runTool } from "./_test_helpers.ts";

const TOOL = new URL("./matrix.ts", import.meta.url);
const path = (relative: string) => new URL(relative, import.meta.url).pathname;
const matrix = (...args: string[]) => runTool(TOOL, ["--unstable-kv", ...TASK_PERMISSIONS], args);

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
  ok(run.stdout.includes("FAIL store opens × default × system"), run.stdout);
  match(
    run.stdout,
    /^ {2}check: openStore threw: Error: Cannot open session database "\//m,
  );
});

Deno.test("matrix --repeat 2 --hogs 1: the soak's sums over both runs", async () => {
  const json = await Deno.makeTempFile({ suffix: ".json" });
  const run = await matrix(
    "--cells",
    "1",
    "--legs",
    "default",
    "--libraries",
    "system",
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
