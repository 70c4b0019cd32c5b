/**
 * The soak's parts of the cells runner (`--repeat N --hogs N`): busy-loop CPU hogs that
 * load every core while the cells run again and again, and the sums over the runs (runs,
 * failures, SIGKILLs delivered, acknowledged operations, acknowledged operations lost).
 * A suite that flakes under load is worse than none: this is how flakes are found.
 *
 * @example
 * ```ts
 * import { soakSums } from "./soak.ts";
 * const sums = soakSums([], 1);
 * console.log(sums.runs, sums.lost); // 1 0
 * ```
 *
 * @module
 */
import type { Outcome } from "./result.ts";

/** Busy-loop processes that keep every core busy. */
export interface Hogs {
  /** Their pids. */
  pids: number[];
  /** CPU seconds they have used so far (as each last reported it, every half second). */
  cpuSeconds(): number;
  /** Kills (SIGKILL) and reaps them; idempotent. */
  stop(): Promise<void>;
  /** Resolves when every hog has exited (on its own or stopped). */
  exited: Promise<void>;
}

// Spins until its lifetime passes or its parent is gone: a runner killed with SIGKILL
// leaves no hog behind for longer than a moment. Prints the CPU time it got every half
// second (a SIGKILLed hog cannot report at its end).
const HOG = `
import { cpuUsage } from "node:process";
const end = Date.now() + Number(Deno.args[0]);
const parent = Deno.ppid;
const out = new TextEncoder();
let x = 0;
let next = 0;
while (Date.now() < end && Deno.ppid === parent) {
  for (let i = 0; i < 1e6; i++) x = (x * 31 + i) | 0;
  if (Date.now() >= next) {
    const { user, system } = cpuUsage();
    Deno.stdout.writeSync(out.encode(\`\${user + system}\\n\`));
    next = Date.now() + 500;
  }
}
`;

/**
 * Starts `n` CPU hogs, each ending by itself after `maxMs` or when this process dies.
 *
 * @param n How many.
 * @param maxMs Their longest life.
 * @returns The hogs, to stop.
 * @example
 * ```ts
 * import { startHogs } from "./soak.ts";
 * const hogs = startHogs(2, 60_000);
 * await hogs.stop();
 * ```
 */
export function startHogs(n: number, maxMs: number): Hogs {
  const processes = Array.from({ length: n }, () =>
    new Deno.Command(Deno.execPath(), {
      args: ["eval", "--no-config", HOG, String(Math.max(0, Math.round(maxMs)))],
      stdin: "null",
      stdout: "piped",
      stderr: "null",
    }).spawn());
  const micros = processes.map(() => 0);
  const drained = processes.map(async (p, i) => {
    let pending = "";
    for await (const chunk of p.stdout.pipeThrough(new TextDecoderStream())) {
      const lines = (pending + chunk).split("\n");
      pending = lines.pop()!;
      const last = Number(lines.at(-1));
      if (Number.isFinite(last) && last > 0) micros[i] = last;
    }
  });
  const exited = Promise.all([...processes.map((p) => p.status), ...drained]).then(() => {});
  return {
    pids: processes.map((p) => p.pid),
    cpuSeconds: () => micros.reduce((a, b) => a + b, 0) / 1e6,
    async stop() {
      for (const p of processes) {
        try {
          p.kill("SIGKILL");
        } catch {
          // Already exited.
        }
      }
      await exited;
    },
    exited,
  };
}

/** Sums of one cell, or of them all. */
export interface SoakTally {
  /** Outcomes that passed. */
  pass: number;
  /** Outcomes that failed (the store). */
  fail: number;
  /** Outcomes where the suite failed (a missing report, a harness error). */
  error: number;
  /** Outcomes skipped. */
  skip: number;
  /** SIGKILLs that ended a child. */
  sigkills: number;
  /** Operations acknowledged to a child. */
  acknowledgedOps: number;
  /** Acknowledged operations missing after recovery. */
  lost: number;
}

/** The sums over a soak. */
export interface SoakSums extends SoakTally {
  /** Runs (repetitions of every leg × library). */
  runs: number;
  /** Runs with a FAIL or an ERROR. */
  failedRuns: number[];
  /** The same sums, by cell (`<n> <title>`). */
  byCell: Record<string, SoakTally>;
}

const tally = (): SoakTally => ({
  pass: 0,
  fail: 0,
  error: 0,
  skip: 0,
  sigkills: 0,
  acknowledgedOps: 0,
  lost: 0,
});

const figure = (outcome: Outcome, name: string): number => {
  const value = outcome.figures?.[name];
  return typeof value === "number" && Number.isFinite(value) ? value : 0;
};

/**
 * Sums the cells' outcomes of a soak: each cell records `sigkills`, `acknowledgedOps` and
 * `lost` in its figures.
 *
 * @param outcomes Every outcome of every run.
 * @param runs How many runs there were.
 * @returns The sums.
 * @example
 * ```ts
 * import { soakSums } from "./soak.ts";
 * const sums = soakSums([{
 *   clause: "1 prefix durability", cell: 1, tier: "cells", leg: "default", library: "system",
 *   status: "PASS", figures: { sigkills: 3, acknowledgedOps: 600, lost: 0 }, run: 1,
 * }], 1);
 * console.log(sums.sigkills, sums.acknowledgedOps); // 3 600
 * ```
 */
export function soakSums(outcomes: readonly Outcome[], runs: number): SoakSums {
  const sums: SoakSums = { ...tally(), runs, failedRuns: [], byCell: {} };
  for (const outcome of outcomes) {
    const cell = sums.byCell[outcome.clause] ??= tally();
    const key = ({ PASS: "pass", FAIL: "fail", ERROR: "error", SKIP: "skip" } as const)[
      outcome.status
    ];
    cell[key]++;
    sums[key]++;
    for (const name of ["sigkills", "acknowledgedOps", "lost"] as const) {
      cell[name] += figure(outcome, name);
      sums[name] += figure(outcome, name);
    }
    const run = outcome.run ?? 1;
    if ((key === "fail" || key === "error") && !sums.failedRuns.includes(run)) {
      sums.failedRuns.push(run);
    }
  }
  sums.failedRuns.sort((a, b) => a - b);
  return sums;
}
