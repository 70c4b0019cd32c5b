/**
 * `deno task sweep`: the crash sweep's command line, over the engine in `runner/sweep/`
 * ({@linkcode sweepTier}). One engine, three tiers:
 *
 * - `deno task sweep`: named crash points (the target's `crashPoints()`), each state
 *   SIGKILLed at its point; `--power-loss` checks the last-sync image instead;
 * - `deno task sweep --syscalls`: SIGKILL before every recorded file-system call, for any
 *   store (no crash points needed), each recovered state continued by a fresh process;
 * - `deno task sweep --syscalls --power-loss`: every state a power loss at each sync point
 *   may leave, the torn last writes enumerated.
 *
 * Prints a table, each FAIL with its checks, cause and fix, replay and evidence, and a
 * verdict line; writes the typed results to `--json`; exits 0 on PASS, 1 on FAIL, ERROR or
 * SKIP (nothing judged is never green; a process the run left running is a FAIL), 2 on a
 * usage error.
 *
 * @module
 */
import {
  type CallKnobs,
  parseStateId,
  type PointKnobs,
  sweepTier,
} from "../../runner/sweep/mod.ts";
import { type Profile, PROFILES } from "../../recorder/crash_states.ts";
import {
  axisFlags,
  checkTarget,
  fail,
  FLAGS,
  jsonPath,
  type ParsedFlags,
  parseFlags,
  runAxis,
  sharedOptions,
  startRun,
  type ToolSpec,
} from "../_cli.ts";
import { endStatesRun, statesRequest } from "../_states_run.ts";
import type { Outcome } from "../../runner/result.ts";

/** The cells whose clauses the sweep judges. */
const SWEEP_CELLS = [1, 2, 3, 4, 5, 8, 9, 10, 11, 12, 13];
const JSON_REPORT = ".cache/sweep/report.json";

/** The longest sequence `--max-length` takes: the space grows 7-fold per operation. */
const MAX_LENGTH = 5;

/** The sweep's command line (its `--help`). */
export const SWEEP_CLI: ToolSpec = {
  usage: "deno task sweep",
  summary: `One crash-sweep engine. By default it moves a SIGKILL forward one named crash point
at a time (every point x occurrence, and the bounded sequences crashed in their last
operation); --syscalls crashes before every recorded file-system call instead (any store,
no crash points), and --power-loss judges the states a power loss leaves (with --syscalls:
every sync point, the torn last writes enumerated). Every recovered state is checked:
acknowledged operations kept, the interrupted one all-or-nothing, the owning clause,
invariants, integrity, recovery determinism; with --syscalls a sample is continued by a
fresh process and judged again. A failing state keeps its files with its replay command.`,
  flags: [
    ...axisFlags(JSON_REPORT),
    FLAGS.quick,
    FLAGS.noBuild,
    { name: "--syscalls", help: "crash before every recorded file-system call (any store)" },
    { name: "--power-loss", help: "judge power-loss states instead of what a SIGKILL leaves" },
    {
      name: "--points",
      value: "LIST",
      help: "named points: exact names, or method prefixes ending with ':'",
      default: "all",
    },
    {
      name: "--k",
      value: "LIST",
      help: "named points: occurrences of each point",
      default: "1,2,3",
    },
    { name: "--full", help: "named points: every sequence state instead of a sample" },
    {
      name: "--sample",
      value: "N",
      help: "named points: sequence states in the sample",
      default: "100",
    },
    { name: "--no-sequences", help: "named points: only the point sweep" },
    {
      name: "--max-length",
      value: "N",
      help: `the longest sequence or program, 1 to ${MAX_LENGTH}`,
      default: "3 (--syscalls: 2)",
    },
    { name: "--state", value: "LIST", help: "named points: replay exactly these states" },
    { name: "--program", value: "LIST", help: "--syscalls: only these programs (ops joined by +)" },
    {
      name: "--call",
      value: "N",
      help: "--syscalls: only state N of each program (the crash before call N)",
    },
    {
      name: "--kills",
      value: "N",
      help: "--syscalls: real SIGKILL children per program (cross-check)",
      default: "1",
    },
    {
      name: "--resumes",
      value: "N",
      help: "--syscalls: recovered states per program continued by a fresh process",
      default: "1",
    },
    {
      name: "--profile",
      value: "NAME",
      help: "power loss: posix or ext4-ordered",
      default: "posix",
    },
    {
      name: "--subsets",
      value: "N",
      help: "power loss: random states per sync point beyond 64 combinations",
      default: "12 (--quick: 4)",
    },
  ],
  exitCodes: {
    0: "PASS: something was judged and nothing failed",
    1: "FAIL (a state failed, a point was not covered, a process left running), ERROR, or SKIP",
  },
};

/** A comma-separated list of whole numbers >= `min`; anything else is a usage error. */
function intList(flags: ParsedFlags, name: string, min: number): number[] | undefined {
  const list = flags.list(name);
  if (list === undefined) return undefined;
  if (!list.length) fail(`Invalid ${name} "${flags.string(name)}": use whole numbers >= ${min}`);
  return list.map((item) => {
    const value = Number(item);
    if (!/^\d+$/.test(item) || !Number.isSafeInteger(value) || value < min) {
      fail(`Invalid ${name} "${item}": use whole numbers >= ${min}, separated by commas`);
    }
    return value;
  });
}

/** The named-point sweep's knobs. */
function pointKnobs(flags: ParsedFlags): PointKnobs {
  if (flags.has("--full") && flags.has("--no-sequences")) {
    fail("Invalid arguments: --full and --no-sequences exclude each other (use one)");
  }
  const states = flags.list("--state");
  for (const id of states ?? []) {
    try {
      parseStateId(id);
    } catch (error) {
      fail((error as Error).message);
    }
  }
  const occurrences = intList(flags, "--k", 1);
  const points = flags.list("--points");
  const sample = flags.int("--sample");
  const maxLength = flags.int("--max-length", 1, MAX_LENGTH);
  return {
    ...(points ? { points } : {}),
    ...(occurrences ? { occurrences } : {}),
    ...(flags.has("--full") ? { sequences: "full" as const } : {}),
    ...(flags.has("--no-sequences") ? { sequences: "none" as const } : {}),
    ...(sample !== undefined ? { sample } : {}),
    ...(maxLength !== undefined ? { maxLength } : {}),
    ...(states ? { states } : {}),
    ...(flags.has("--power-loss") ? { powerLoss: true } : {}),
  };
}

/** The recorded-call sweep's knobs. */
function callKnobs(flags: ParsedFlags): CallKnobs {
  const profile = flags.string("--profile") as Profile | undefined;
  if (profile !== undefined && !PROFILES.includes(profile)) {
    fail(`Invalid --profile "${profile}": use ${PROFILES.join(" or ")}`);
  }
  const programs = flags.list("--program");
  const call = flags.int("--call", 1);
  const kills = flags.int("--kills", 0);
  const resumes = flags.int("--resumes", 0);
  const subsets = flags.int("--subsets", 0);
  const maxLength = flags.int("--max-length", 1, MAX_LENGTH);
  return {
    ...(programs ? { programs } : {}),
    ...(call !== undefined ? { call } : {}),
    ...(kills !== undefined ? { kills } : {}),
    ...(resumes !== undefined ? { resumes } : {}),
    ...(subsets !== undefined ? { subsets } : {}),
    ...(profile ? { profile } : {}),
    ...(maxLength !== undefined ? { maxLength } : {}),
  };
}

/**
 * The in-process checking rate of the recorded-call tiers (recording and children left
 * out), one figure per leg × library summed.
 *
 * @param results The outcomes.
 * @returns The states judged and the seconds spent checking them.
 */
export function checkingRate(results: readonly Outcome[]): { states: number; seconds: number } {
  const runs = new Map<string, number>();
  for (const r of results) {
    if (typeof r.figures?.seconds === "number") {
      runs.set(`${r.leg}|${r.library}`, r.figures.seconds);
    }
  }
  const states = results.reduce((n, r) => n + (r.judged ?? 0), 0);
  return { states, seconds: [...runs.values()].reduce((a, b) => a + b, 0) };
}

async function main(args: string[]): Promise<number> {
  const flags = parseFlags(SWEEP_CLI, args);
  const syscalls = flags.has("--syscalls");
  const tier = syscalls
    ? (flags.has("--power-loss") ? "syscalls-power-loss" : "syscalls-crash")
    : "sweep";
  const knobs = syscalls ? { calls: callKnobs(flags) } : { points: pointKnobs(flags) };
  const shared = sharedOptions(flags, SWEEP_CELLS);
  const json = jsonPath(flags, JSON_REPORT);
  startRun();
  await checkTarget(shared.target);
  const { libraries } = await runAxis("sweep", shared, { flags });
  const seed = shared.seed ?? Math.floor(Math.random() * 2 ** 31);
  const name = `sweep${syscalls ? " --syscalls" : ""}${
    flags.has("--power-loss") ? " --power-loss" : ""
  }`;
  console.log(
    `${name}: target ${shared.target}; legs ${shared.legs.join(", ")}; libraries ${
      libraries.map((l) => l.label).join(", ")
    }; seed ${seed} (replay with --seed ${seed})`,
  );
  const started = performance.now();
  const axis = { flags, libraries, seed };
  const outcome = await sweepTier({ ...statesRequest(shared, axis), tier, ...knobs });
  const lines: string[] = [];
  if (syscalls) {
    const rate = checkingRate(outcome.results);
    lines.push(
      `checking: ${rate.states} states in ${rate.seconds.toFixed(2)} s (${
        Math.round(rate.states / Math.max(rate.seconds, 1e-9))
      } states/s; recording, children and resumes left out)`,
    );
  }
  return await endStatesRun(outcome, {
    ...axis,
    name,
    tool: "sweep",
    json,
    shared,
    started,
    lines,
  });
}

if (import.meta.main) Deno.exit(await main(Deno.args));
