/**
 * `deno task powerloss-cells`: the power-loss tier's cells (1, 3, 4, 5, 8 to 12) for any target,
 * a thin command line over {@linkcode powerLossCellsTier} (`runner/sweep/`): the writer's
 * file-system calls are recorded by the LD_PRELOAD recorder and every state a power loss
 * at each sync point may leave under the profile is judged (the torn last writes
 * enumerated), a sample of the recovered states continued by a fresh process. Prints a
 * table, each FAIL with its checks, cause and fix, replay and evidence, the rate line and
 * the verdict; exits 0 on PASS, 1 on FAIL, ERROR or SKIP (a process the run left running
 * is a FAIL), 2 on a usage error.
 *
 * @module
 */
import { powerLossCellsTier } from "../runner/sweep/mod.ts";
import type { Outcome } from "../runner/result.ts";
import { type Profile, PROFILES } from "../recorder/crash_states.ts";
import {
  axisFlags,
  checkTarget,
  fail,
  FLAGS,
  jsonPath,
  parseFlags,
  runAxis,
  sharedOptions,
  startRun,
  type ToolSpec,
} from "./_cli.ts";
import { loadAverage } from "./_table.ts";
import { endStatesRun, statesRequest } from "./_states_run.ts";

/** The power-loss cells. */
const CELLS = [1, 3, 4, 5, 8, 9, 10, 11, 12];
const JSON_REPORT = ".cache/powerloss-cells/report.json";

/** Environment variables that set a target's durability policy, passed to its writers. */
const POLICY_ENV = [
  "NODE_SQLITE_JOURNAL_MODE",
  "NODE_SQLITE_SYNCHRONOUS",
  "REFERENCE_SYNCHRONOUS",
  "SESSION_DB_SYNCHRONOUS",
];

/** The tool's command line (its `--help`). */
export const POWERLOSS_CELLS_CLI: ToolSpec = {
  usage: "deno task powerloss-cells",
  summary: `Runs the power-loss tier's cells (1, 3, 4, 5, 8 to 12) for any target on every leg x
library: the writer's file-system calls are recorded by the LD_PRELOAD recorder, it is
SIGKILLed, and every state a power loss at each sync point may leave under the persistence
profile is judged (the torn last writes enumerated); a sample of the recovered states is
continued by a fresh process and judged again. Linux/glibc with cc only; elsewhere it SKIPs.`,
  flags: [
    ...axisFlags(JSON_REPORT),
    FLAGS.quick,
    FLAGS.noBuild,
    { name: "--profile", value: "NAME", help: "posix or ext4-ordered", default: "posix" },
    {
      name: "--subsets",
      value: "N",
      help: "random states per sync point beyond 64 combinations",
      default: "12 (--quick: 4)",
    },
    {
      name: "--instants",
      value: "N",
      help: "only the last N sync points of each run",
      default: "all",
    },
    {
      name: "--resumes",
      value: "N",
      help: "recovered states per run continued by a fresh process",
      default: "3 (--quick: 1)",
    },
  ],
  exitCodes: {
    0: "PASS: something was judged and nothing failed",
    1: "FAIL (a process left running too), ERROR, or SKIP (nothing was judged)",
  },
};

/**
 * The power-loss cells' figures summed over the outcomes: states, the seconds and CPU
 * seconds spent checking them, the distinct images SQLite recovered, the distinct
 * contents judged, torn states and resumes.
 *
 * @param results The outcomes.
 * @returns The sums.
 * @example
 * ```ts
 * import { powerLossRate } from "./powerloss_cells.ts";
 * console.log(powerLossRate([]).states); // 0
 * ```
 */
export function powerLossRate(results: readonly Outcome[]): Record<
  "states" | "seconds" | "cpuSeconds" | "recovered" | "judgedDistinct" | "tornStates" | "resumes",
  number
> {
  const sum = (name: string) => results.reduce((n, r) => n + Number(r.figures?.[name] ?? 0), 0);
  return {
    states: sum("states"),
    seconds: sum("seconds"),
    cpuSeconds: sum("cpuSeconds"),
    recovered: sum("recovered"),
    judgedDistinct: sum("judgedDistinct"),
    tornStates: sum("tornStates"),
    resumes: sum("resumes"),
  };
}

/** The rate line: `profile P: N states in S s (R states/s; CPU …)`, summed over the outcomes. */
function rateLine(results: readonly Outcome[], profile: string): string {
  const f = powerLossRate(results);
  const rate = (s: number) => Math.round(f.states / Math.max(s, 1e-9));
  return `profile ${profile}: ${f.states} states in ${f.seconds.toFixed(2)} s (${
    rate(f.seconds)
  } states/s; CPU ${f.cpuSeconds.toFixed(2)} s, ${
    rate(f.cpuSeconds)
  } per CPU second): ${f.recovered} distinct images recovered by SQLite, ` +
    `the judge ran on ${f.judgedDistinct} distinct recovered contents; ${f.tornStates} torn states, ${f.resumes} resumes; load average ${loadAverage()}`;
}

async function main(args: string[]): Promise<number> {
  const flags = parseFlags(POWERLOSS_CELLS_CLI, args);
  const profile = (flags.string("--profile") ?? "posix") as Profile;
  if (!PROFILES.includes(profile)) {
    fail(`Invalid --profile "${profile}": use ${PROFILES.join(" or ")}`);
  }
  const subsets = flags.int("--subsets");
  const instants = flags.int("--instants", 1);
  const resumes = flags.int("--resumes", 0);
  const shared = sharedOptions(flags, CELLS);
  const json = jsonPath(flags, JSON_REPORT);
  startRun();
  await checkTarget(shared.target);
  const { libraries } = await runAxis("powerloss-cells", shared, { flags });
  const seed = shared.seed ?? Math.floor(Math.random() * 2 ** 31);
  // The targets' durability knobs reach the writers (their children's env is explicit).
  const env: Record<string, string> = {};
  for (const name of POLICY_ENV) {
    const value = Deno.env.get(name);
    if (value !== undefined) env[name] = value;
  }
  console.log(
    `powerloss-cells: target ${shared.target}; legs ${shared.legs.join(", ")}; libraries ${
      libraries.map((l) => l.label).join(", ")
    }; profile ${profile}; seed ${seed} (replay with --seed ${seed})`,
  );
  const started = performance.now();
  const axis = { flags, libraries, seed };
  const outcome = await powerLossCellsTier({
    ...statesRequest(shared, axis),
    powerLoss: {
      profile,
      env,
      ...(subsets !== undefined ? { subsets } : {}),
      ...(instants !== undefined ? { instants } : {}),
      ...(resumes !== undefined ? { resumes } : {}),
    },
  });
  return await endStatesRun(outcome, {
    ...axis,
    name: "powerloss-cells",
    tool: "powerloss-cells",
    json,
    shared,
    started,
    extra: { profile },
    lines: [rateLine(outcome.results, profile)],
  });
}

if (import.meta.main) Deno.exit(await main(Deno.args));
