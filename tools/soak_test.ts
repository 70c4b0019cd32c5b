import { deepStrictEqual, match, ok, strictEqual, throws } from "node:assert/strict";
import type { CellReport } from "../cells/cell_report.ts";
import { type LegOutcome, parseSoakArgs, SoakUsageError, startHogs, summarize } from "./soak.ts";
import { runTool } from "./_test_helpers.ts";

Deno.test("parseSoakArgs: runs, hogs, legs; bad values name the fix", () => {
  const options = parseSoakArgs(["--runs", "30", "--hogs", "2", "--legs", "default,WAL"]);
  strictEqual(options.runs, 30);
  strictEqual(options.hogs, 2);
  deepStrictEqual(options.legs, ["default", "wal"]);
  throws(() => parseSoakArgs(["--runs", "0"]), /Invalid --runs "0": use a whole number from 1/);
  throws(() => parseSoakArgs(["--legs", "fast"]), /Unknown journal-mode leg "fast"/);
  throws(() => parseSoakArgs(["--hogs"]), /--hogs needs a value/);
  throws(() => parseSoakArgs(["--forever"]), SoakUsageError);
  throws(() => parseSoakArgs(["--timeout", "1.5"]), /Invalid --timeout "1.5": use a whole number/);
  throws(() => parseSoakArgs(["--cells", "1,9"]), /Unknown cell "9" in --cells: use some of 1, 2/);
  throws(() => parseSoakArgs(["--cells", ","]), /Invalid --cells: name at least one/);
  deepStrictEqual(parseSoakArgs(["--cells=2,3"]).cells, [2, 3]);
});

Deno.test("deno task soak: --help prints the flags and exit codes; a usage error exits 2", async () => {
  const soak = (...args: string[]) =>
    runTool(new URL("./soak.ts", import.meta.url), ["--allow-read", "--allow-env"], args);
  const help = await soak("--help");
  strictEqual(help.code, 0);
  ok(/^Usage: deno task soak \[flags\]/.test(help.stdout), help.stdout);
  for (const flag of ["--runs N", "--hogs N", "--timeout S", "Exit codes:", "  2   usage error"]) {
    ok(help.stdout.includes(flag), `--help lacks "${flag}":\n${help.stdout}`);
  }
  const bad = await soak("--hogs", "many");
  strictEqual(bad.code, 2);
  match(bad.stderr, /Invalid --hogs "many": use a whole number from 0/);
});

Deno.test("summarize sums the cells' tallies and counts a leg that failed without a report", () => {
  const report = (cell: number, status: CellReport["status"], figures = {}): CellReport => ({
    cell,
    title: `c${cell}`,
    target: "t",
    leg: "default",
    sqliteVersion: "3",
    library: "l",
    status,
    figures,
  });
  const outcomes: LegOutcome[] = [
    {
      run: 1,
      leg: "default",
      code: 0,
      seconds: 1,
      failures: [],
      reports: [
        report(1, "PASS", { sigkills: 3, acknowledgedOps: 600, lost: 0 }),
        report(2, "PASS", { sigkills: 0, acknowledgedOps: 1, lost: 0 }),
      ],
    },
    {
      run: 2,
      leg: "default",
      code: 1,
      seconds: 1,
      failures: ["cell 1: lost"],
      reports: [report(1, "FAIL", { sigkills: 1, acknowledgedOps: 200, lost: 1 })],
    },
    { run: 3, leg: "default", code: null, seconds: 9, failures: ["timeout"], reports: [] },
  ];
  const totals = summarize(outcomes);
  deepStrictEqual(
    { pass: totals.pass, fail: totals.fail, sigkills: totals.sigkills },
    { pass: 2, fail: 2, sigkills: 4 },
  );
  strictEqual(totals.acknowledgedOps, 801);
  strictEqual(totals.lost, 1);
  deepStrictEqual(totals.byCell["1 c1"], {
    pass: 1,
    fail: 1,
    skip: 0,
    sigkills: 4,
    acknowledgedOps: 800,
    lost: 1,
  });
});

Deno.test("a CPU hog burns CPU, ends by itself at its bound, and stop() kills the rest", async () => {
  const bounded = startHogs(1, 300);
  const started = performance.now();
  await bounded.exited; // no stop(): its own bound ends it
  ok(performance.now() - started < 20_000, "the hog outlived its bound");
  const hogs = startHogs(1, 60_000);
  // Bounded wait for its first CPU report.
  for (let i = 0; i < 200 && hogs.cpuSeconds() === 0; i++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await hogs.stop();
  ok(hogs.cpuSeconds() > 0, "the hog never reported CPU time");
});
