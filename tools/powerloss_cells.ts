/**
 * `deno task powerloss-cells`: the power-loss tier's cells (1, 3, 4 and 5) for any target,
 * a thin command line over {@linkcode powerLossCellsTier} (`runner/sweep/`): the writer's
 * file-system calls are recorded by the LD_PRELOAD recorder and every state a power loss
 * at each sync point may leave under the profile is judged (the torn last writes
 * enumerated), a sample of the recovered states continued by a fresh process. Prints a
 * table, each FAIL with its checks, cause and fix, replay and evidence, the rate line and
 * the verdict; exits 0 on PASS, 1 on FAIL or SKIP, 2 on a usage error.
 *
 * @module
 */
import { powerLossCellsTier } from "../runner/sweep/mod.ts";
import type { Outcome } from "../runner/result.ts";
import { type Profile, PROFILES } from "../recorder/crash_states.ts";
import { fail, parseFlags, type ToolSpec } from "./_cli.ts";
import { commonArgs, commonFlags, writeReport } from "./sweep/_args.ts";
import { loadAverage, printTier } from "./sweep/_print.ts";

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
  summary: `Runs the power-loss tier's cells (1, 3, 4 and 5) for any target on every leg x
library: the writer's file-system calls are recorded by the LD_PRELOAD recorder, it is
SIGKILLed, and every state a power loss at each sync point may leave under the persistence
profile is judged (the torn last writes enumerated); a sample of the recovered states is
continued by a fresh process and judged again. Linux/glibc with cc only; elsewhere it SKIPs.`,
  flags: [
    ...commonFlags(".cache/powerloss-cells/report.json", "1,3,4,5"),
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
    1: "FAIL, or SKIP (nothing was judged)",
  },
};

/**
 * The rate line: `N states in S s (R states/s; CPU …)`, the distinct images SQLite
 * recovered and the judge's runs, summed over the outcomes.
 *
 * @param results The outcomes.
 * @param profile The persistence profile.
 * @returns The line.
 * @example
 * ```ts
 * import { rateLine } from "./powerloss_cells.ts";
 * console.log(rateLine([], "posix").startsWith("profile posix: 0 states")); // true
 * ```
 */
export function rateLine(results: readonly Outcome[], profile: string): string {
  const sum = (name: string) => results.reduce((n, r) => n + Number(r.figures?.[name] ?? 0), 0);
  const states = sum("states");
  const seconds = sum("seconds");
  const cpu = sum("cpuSeconds");
  const rate = (s: number) => Math.round(states / Math.max(s, 1e-9));
  return `profile ${profile}: ${states} states in ${seconds.toFixed(2)} s (${
    rate(seconds)
  } states/s; CPU ${cpu.toFixed(2)} s, ${rate(cpu)} per CPU second): ${
    sum("recovered")
  } distinct images recovered by SQLite, ` +
    `the judge ran on ${sum("judgedDistinct")} distinct recovered contents; ${
      sum("tornStates")
    } torn states, ${sum("resumes")} resumes; load average ${loadAverage()}`;
}

if (import.meta.main) {
  const flags = parseFlags(POWERLOSS_CELLS_CLI, Deno.args);
  const profile = (flags.string("--profile") ?? "posix") as Profile;
  if (!PROFILES.includes(profile)) {
    fail(`Invalid --profile "${profile}": use ${PROFILES.join(" or ")}`);
  }
  const subsets = flags.int("--subsets");
  const instants = flags.int("--instants", 1);
  const resumes = flags.int("--resumes", 0);
  const args = await commonArgs(flags, ".cache/powerloss-cells/report.json", [1, 3, 4, 5]);
  // The targets' durability knobs reach the writers (their children's env is explicit).
  const env: Record<string, string> = {};
  for (const name of POLICY_ENV) {
    const value = Deno.env.get(name);
    if (value !== undefined) env[name] = value;
  }
  console.log(
    `powerloss-cells: target ${args.target}; legs ${args.legs.join(", ")}; libraries ${
      args.libraries.map((l) => l.label).join(", ")
    }; profile ${profile}; seed ${args.seed} (replay with --seed ${args.seed})`,
  );
  const started = performance.now();
  const outcome = await powerLossCellsTier({
    ...args,
    evidenceDir: Deno.env.get("CELLS_EVIDENCE_DIR") ?? ".cache/evidence",
    log: (line) => console.log(line),
    powerLoss: {
      profile,
      env,
      ...(subsets !== undefined ? { subsets } : {}),
      ...(instants !== undefined ? { instants } : {}),
      ...(resumes !== undefined ? { resumes } : {}),
    },
  });
  const seconds = (performance.now() - started) / 1000;
  await writeReport(args.json, args, outcome, { profile });
  console.log(rateLine(outcome.results, profile));
  const code = printTier("powerloss-cells", outcome, seconds);
  console.log(`report: ${args.json}`);
  Deno.exit(code);
}
