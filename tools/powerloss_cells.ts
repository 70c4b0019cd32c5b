/**
 * Runs the power-loss tier's cells (1, 3, 4 and 5, `cells/power_loss.ts`) on the
 * current leg at full size, for any target (the child's file-system calls are recorded
 * by the LD_PRELOAD recorder): the default test run keeps small ones of cells 1, 3 and 4;
 * cell 5 (recoverers race on every crash state, twice) runs here only. Prints the
 * persistence profile, each cell's verdict, and `N states in S s (R states/s)`.
 *
 * Flags: see `deno task powerloss-cells --help` ({@linkcode POWERLOSS_CELLS_CLI}).
 *
 * @module
 */
import {
  type PowerLossOptions,
  type PowerLossTotals,
  powerLossTotals,
} from "../cells/power_loss.ts";
import { type Profile, PROFILES } from "../recorder/crash_states.ts";
import { powerLossForkCell } from "../cells/power_loss_fork_determinism.ts";
import { powerLossOutboxCell } from "../cells/power_loss_outbox_exactly_once.ts";
import { powerLossPrefixCell } from "../cells/power_loss_prefix_durability.ts";
import { powerLossRotationCell } from "../cells/power_loss_rotation_atomicity.ts";
import { runDefinitions } from "../cells/run_definitions.ts";
import { targetSpecifier } from "../cells/target.ts";
import { fail, parseFlags, type ToolSpec } from "./_cli.ts";

const CELLS: Record<string, (options: PowerLossOptions) => Promise<Deno.TestDefinition[]>> = {
  "1": powerLossPrefixCell,
  "3": powerLossRotationCell,
  "4": powerLossForkCell,
  "5": powerLossOutboxCell,
};

/** Environment variables that set a target's durability policy, passed to its writers. */
const POLICY_ENV = [
  "NODE_SQLITE_JOURNAL_MODE",
  "NODE_SQLITE_SYNCHRONOUS",
  "REFERENCE_SYNCHRONOUS",
  "SESSION_DB_SYNCHRONOUS",
];

/** The largest seed: the cells' seeds are 31-bit (`runSeed`). */
const MAX_SEED = 2 ** 31 - 1;

/** The tool's command line (its `--help`). */
export const POWERLOSS_CELLS_CLI: ToolSpec = {
  usage: "deno task powerloss-cells",
  summary: `Runs the power-loss tier's cells (1, 3, 4 and 5) at full size on the current leg
(SESSION_DB_JOURNAL_MODE, DENO_SQLITE_PATH) for any target: the writer's file-system calls
are recorded by the LD_PRELOAD recorder and every state a power loss at each sync point may
leave under the persistence profile is judged. Prints one line per cell: PASS, FAIL or SKIP
with the first failing step, then the states checked per second. Linux/glibc with cc only;
elsewhere every cell SKIPs with the reason.`,
  flags: [
    {
      name: "--target",
      value: "MODULE",
      help: "the store's target module",
      default: "the reference store",
    },
    { name: "--cells", value: "LIST", help: "cells to run", default: "1,3,4,5" },
    { name: "--seed", value: "N", help: "replay the random choices of a run" },
    { name: "--profile", value: "NAME", help: "posix or ext4-ordered", default: "posix" },
    {
      name: "--subsets",
      value: "N",
      help: "random states per crash instant (half torn)",
      default: "12",
    },
    { name: "--instants", value: "N", help: "only the last N sync points", default: "all" },
  ],
  exitCodes: { 0: "every cell that ran passed", 1: "a cell failed" },
};

/**
 * Runs the selected power-loss cells on the current leg.
 *
 * @param options The cells' options.
 * @param cells The cell numbers (default 1, 3, 4, 5).
 * @returns Whether every cell that ran passed.
 * @example
 * ```ts ignore
 * import { runPowerLossCells } from "./powerloss_cells.ts";
 * await runPowerLossCells({ target: new URL("../cells/reference_target.ts", import.meta.url) });
 * ```
 */
export async function runPowerLossCells(
  options: PowerLossOptions,
  cells: readonly string[] = Object.keys(CELLS),
): Promise<boolean> {
  let ok = true;
  for (const id of cells) {
    const define = CELLS[id];
    if (!define) throw new Error(`Unknown power-loss cell "${id}": use 1, 3, 4 or 5`);
    const started = performance.now();
    for (const outcome of await runDefinitions(await define(options))) {
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      console.log(
        `cell ${id}: ${outcome.status} in ${seconds} s: ${outcome.name}${
          outcome.detail ? `\n  ${outcome.detail.split("\n")[0]}` : ""
        }`,
      );
      if (outcome.status === "FAIL") ok = false;
    }
  }
  const totals = powerLossTotals();
  console.log(`profile ${options.profile ?? "posix"}: ${rateLine(totals)}`);
  return ok;
}

/**
 * The rate line: `N states in S s (R states/s)`, then the CPU time (a figure the
 * machine's other load disturbs less), the distinct images SQLite recovered (states
 * with one key hold byte-identical files and share a verdict) and the judge's runs.
 *
 * @param totals The power-loss checking totals.
 * @returns The line.
 * @example
 * ```ts
 * import { rateLine } from "./powerloss_cells.ts";
 * const line = rateLine({ states: 2000, recovered: 900, judged: 40, seconds: 1.6, cpuSeconds: 1.5 });
 * console.log(line.startsWith("2000 states in 1.60 s (1250 states/s;")); // true
 * ```
 */
export function rateLine(totals: PowerLossTotals): string {
  const { states, recovered, judged, seconds, cpuSeconds } = totals;
  const rate = (s: number) => Math.round(states / Math.max(s, 1e-9));
  return `${states} states in ${seconds.toFixed(2)} s (${rate(seconds)} states/s; CPU ${
    cpuSeconds.toFixed(2)
  } s, ${rate(cpuSeconds)} per CPU second): ${recovered} distinct images recovered by SQLite, ` +
    `the judge ran on ${judged} distinct recovered contents; load average ${loadAverage()}`;
}

/** The 1-minute load average (the machine may be shared), or `?`. */
function loadAverage(): string {
  try {
    return Deno.loadavg()[0]!.toFixed(2);
  } catch {
    return "?";
  }
}

function parseArgs(args: readonly string[]): { options: PowerLossOptions; cells: string[] } {
  const flags = parseFlags(POWERLOSS_CELLS_CLI, args);
  const target = flags.string("--target");
  const cells = flags.list("--cells") ?? Object.keys(CELLS);
  if (cells.length === 0) fail("Invalid --cells: name some of 1, 3, 4 and 5");
  for (const cell of cells) {
    if (!CELLS[cell]) fail(`Unknown cell "${cell}": use 1, 3, 4 and/or 5`);
  }
  const seed = flags.int("--seed", 0, MAX_SEED);
  const subsets = flags.int("--subsets");
  const instants = flags.int("--instants", 1);
  const profile = (flags.string("--profile") ?? "posix") as Profile;
  if (!PROFILES.includes(profile)) {
    fail(`Invalid --profile "${profile}": use ${PROFILES.join(" or ")}`);
  }
  // The targets' durability knobs reach the writers (their children's env is explicit).
  const env: Record<string, string> = {};
  for (const name of POLICY_ENV) {
    const value = Deno.env.get(name);
    if (value !== undefined) env[name] = value;
  }
  return {
    options: {
      env,
      target: target === undefined
        ? new URL("../cells/reference_target.ts", import.meta.url)
        : targetSpecifier(target),
      ...(seed !== undefined ? { seed } : {}),
      profile,
      ...(subsets !== undefined ? { subsets } : {}),
      ...(instants !== undefined ? { instants } : {}),
    },
    cells,
  };
}

if (import.meta.main) {
  const { options, cells } = parseArgs(Deno.args);
  Deno.exit(await runPowerLossCells(options, cells) ? 0 : 1);
}
