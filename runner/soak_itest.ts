import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import type { Outcome } from "./result.ts";
import { soakSums, startHogs } from "./soak.ts";

const outcome = (cell: number, status: Outcome["status"], run: number, figures = {}): Outcome => ({
  clause: `${cell} c${cell}`,
  cell,
  tier: "cells",
  leg: "default",
  library: "system",
  status,
  run,
  figures,
});

Deno.test("soak sums: runs, failures and errors by run, SIGKILLs, acknowledged operations, lost", () => {
  const sums = soakSums([
    outcome(1, "PASS", 1, { sigkills: 3, acknowledgedOps: 600, lost: 0 }),
    outcome(2, "PASS", 1, { sigkills: 0, acknowledgedOps: 1, lost: 0 }),
    outcome(1, "FAIL", 2, { sigkills: 1, acknowledgedOps: 200, lost: 1 }),
    outcome(2, "ERROR", 3),
    outcome(2, "SKIP", 3),
  ], 3);
  deepStrictEqual(
    [sums.runs, sums.pass, sums.fail, sums.error, sums.skip, sums.failedRuns],
    [3, 2, 1, 1, 1, [2, 3]],
  );
  deepStrictEqual([sums.sigkills, sums.acknowledgedOps, sums.lost], [4, 801, 1]);
  deepStrictEqual(sums.byCell["1 c1"], {
    pass: 1,
    fail: 1,
    error: 0,
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
  strictEqual(hogs.pids.length, 1);
});
