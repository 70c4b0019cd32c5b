// What every tool's command line shares: usage errors, the flag table and `--help`, and
// the one flag vocabulary (FLAGS) with its defaults and parsers (sharedOptions).
import { dirname, isAbsolute, join, resolve } from "node:path";
import type { StoreEngine } from "../cells/engine/report.ts";
import { CELLS } from "../cells/register.ts";
import { loadTarget, targetSpecifier } from "../cells/contract/target.ts";
import { declaredPermissions } from "../cells/contract/target_access.ts";
import { widenedFlags } from "../harness/permissions.ts";
import {
  reapRunScope,
  startRunScope,
  type Survivor,
  survivorsMessage,
} from "../harness/process_tree.ts";
import { exists } from "../internal/fs.ts";
import { fromFileUrl } from "../internal/path.ts";
import { checkRunSettings } from "../runner/cell_settings.ts";
import { CELL_DEADLINE_ENV } from "../cells/engine/run.ts";
import { evidenceRoot } from "../harness/evidence.ts";
import { type LegName, LEGS, parseLeg } from "../harness/legs.ts";
import { LEVELS } from "../runner/report_schema.ts";
import { type TierName, TIERS } from "../runner/result.ts";
import { probeEngine } from "../runner/capabilities.ts";
import { hostLibrary, type Library, libraryAxis } from "../runner/libraries.ts";

export { LEG_PERMISSIONS, legChildEnv } from "../runner/leg_child.ts";

/** Prints a usage error and exits 2 (1 is kept for a failed run). */
export function fail(message: string): never {
  console.error(message);
  Deno.exit(2);
}

/** One flag of a tool's command line, as its `--help` shows it. */
export interface FlagSpec {
  /** The flag, e.g. `--legs`. */
  name: string;
  /** The placeholder of its value, e.g. `LIST`; absent for a switch that takes none. */
  value?: string;
  /** What it does, one line. */
  help: string;
  /** Its default, as `--help` shows it. */
  default?: string;
}

/** A tool's command line: what `--help` prints and what {@linkcode parseFlags} accepts. */
export interface ToolSpec {
  /** How it is run, e.g. `deno task matrix`. */
  usage: string;
  /** What it does, a few lines. */
  summary: string;
  /** Its flags (`--help` is added). */
  flags: readonly FlagSpec[];
  /** Its exit codes and what each means (2, a usage error, is added). */
  exitCodes: Readonly<Record<number, string>>;
}

/** `--help`'s text for a tool, generated from its table. */
export function helpText(tool: ToolSpec): string {
  const flags = [...tool.flags, { name: "--help", help: "print this help and exit" }];
  const left = flags.map((f) => f.value ? `${f.name} ${f.value}` : f.name);
  const width = Math.max(...left.map((l) => l.length)) + 2;
  const codes = { ...tool.exitCodes, 2: "usage error (the message names the problem and the fix)" };
  return [
    `Usage: ${tool.usage} [flags]`,
    "",
    tool.summary.trim(),
    "",
    "Flags:",
    ...flags.map((f, i) =>
      `  ${left[i]!.padEnd(width)}${f.help}${
        f.default !== undefined ? ` (default: ${f.default})` : ""
      }`
    ),
    "",
    "Exit codes:",
    ...Object.entries(codes).sort(([a], [b]) => Number(a) - Number(b)).map(([code, meaning]) =>
      `  ${code.padEnd(4)}${meaning}`
    ),
  ].join("\n");
}

/** The flags given on a command line, checked against the tool's table. */
export class ParsedFlags {
  #values: Map<string, string | true>;
  #fail: (message: string) => never;

  /**
   * Wraps the parsed values (flag name to value, `true` for a switch); a bad value goes
   * to `onError` (default: print it and exit 2).
   */
  constructor(values: Map<string, string | true>, onError: (message: string) => never = fail) {
    this.#values = values;
    this.#fail = onError;
  }

  /** Whether the flag was given. */
  has(name: string): boolean {
    return this.#values.has(name);
  }

  /** Prints a usage error naming the problem and the fix, and exits 2 (or calls onError). */
  fail(message: string): never {
    return this.#fail(message);
  }

  /** The flag's value, or `undefined` when it was not given. */
  string(name: string): string | undefined {
    const value = this.#values.get(name);
    return typeof value === "string" ? value : undefined;
  }

  /** The flag's comma-separated values, or `undefined` when it was not given. */
  list(name: string): string[] | undefined {
    return this.string(name)?.split(",").map((item) => item.trim()).filter((item) => item);
  }

  /**
   * The flag's whole-number value within `[min, max]`, or `undefined` when it was not
   * given; anything else is a usage error naming the flag, the value and the range.
   */
  int(name: string, min = 0, max = Number.MAX_SAFE_INTEGER): number | undefined {
    const raw = this.string(name);
    if (raw === undefined) return undefined;
    const value = Number(raw);
    if (!/^-?\d+$/.test(raw) || !Number.isSafeInteger(value) || value < min || value > max) {
      const range = max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `from ${min} to ${max}`;
      this.#fail(`Invalid ${name} "${raw}": use a whole number ${range}`);
    }
    return value;
  }
}

/**
 * Parses a tool's arguments against its table: `--help` prints the help and exits 0; an
 * unknown flag, a missing value or a stray argument is a usage error (exit 2) naming the
 * valid flags. A value is the next argument or follows `=`; the last of a repeated flag wins.
 * A tool that must test its usage errors passes `onError` (e.g. one that throws).
 */
export function parseFlags(
  tool: ToolSpec,
  args: readonly string[],
  onError: (message: string) => never = fail,
): ParsedFlags {
  const byName = new Map(tool.flags.map((flag) => [flag.name, flag]));
  const values = new Map<string, string | true>();
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--help" || arg === "-h") {
      console.log(helpText(tool));
      Deno.exit(0);
    }
    const eq = arg.indexOf("=");
    const name = arg.startsWith("--") && eq > 0 ? arg.slice(0, eq) : arg;
    const spec = byName.get(name);
    if (!spec) {
      const valid = [...byName.keys()].join(", ");
      onError(`Invalid argument "${arg}": use ${valid} (see --help)`);
    }
    if (spec.value === undefined) {
      if (name !== arg) onError(`Invalid argument "${arg}": ${name} takes no value`);
      values.set(name, true);
      continue;
    }
    const value = name !== arg ? arg.slice(eq + 1) : args[++i];
    if (value === undefined || value === "") {
      onError(`Invalid arguments: ${name} needs a value (${spec.value})`);
    }
    values.set(name, value);
  }
  return new ParsedFlags(values, onError);
}

/** Parses `--legs default,delete,wal`; an unknown leg is a usage error naming the valid ones. */
export function legListArg(value: string, onError: (message: string) => never = fail): LegName[] {
  // An empty item is the default leg, as an unset SESSION_DB_JOURNAL_MODE is.
  return value.split(",").map((leg) => {
    try {
      return parseLeg(leg);
    } catch (error) {
      return onError((error as Error).message);
    }
  });
}

/**
 * The one flag vocabulary: every task that takes one of these takes it with this name,
 * value, meaning and default (docs/design.md#flags).
 */
export const FLAGS = {
  target: {
    name: "--target",
    value: "MODULE",
    help: "the store's target module (a URL, or a path from where the command is typed)",
    default: "the reference store",
  },
  cells: {
    name: "--cells",
    value: "LIST",
    help: "cells whose clauses to judge",
    default: "every one the task judges",
  },
  legs: { name: "--legs", value: "LIST", help: "journal-mode legs", default: "default,delete,wal" },
  libraries: {
    name: "--libraries",
    value: "LIST",
    help: "SQLite libraries: system, fixed, paths",
    default: "system,fixed",
  },
  seed: {
    name: "--seed",
    value: "N",
    help: "replay a run's random choices",
    default: "random, reported",
  },
  jobs: { name: "--jobs", value: "N", help: "runs at once, 1 to 64", default: "2" },
  quick: { name: "--quick", help: "short spans and fewer states: a smoke run, not a verdict" },
  repeat: {
    name: "--repeat",
    value: "N",
    help: "run it all N times and sum the runs (a soak)",
    default: "1",
  },
  hogs: {
    name: "--hogs",
    value: "N",
    help: "busy-loop CPU hogs alongside, 0 to 64",
    default: "0",
  },
  tiers: { name: "--tiers", value: "LIST", help: `tiers: ${TIERS.join(", ")}`, default: "all" },
  requireLevel: {
    name: "--require-level",
    value: "LEVEL",
    help: "exit 1 below this level: BASE, DURABLE, FULL or HARDENED",
  },
  openDeadline: {
    name: "--open-deadline",
    value: "MS",
    help: "how long a store may take to open (CELLS_OPEN_DEADLINE_MS)",
    default: "30000",
  },
  cellDeadline: {
    name: "--cell-deadline",
    value: "MS",
    help:
      "a cell's overall deadline: past it a stalled cell FAILs, a moving one is an ERROR (CELLS_CELL_DEADLINE_MS)",
    default: "600000",
  },
  noBuild: { name: "--no-build", help: "do not build the fixed SQLite when it is missing" },
} as const satisfies Record<string, FlagSpec>;

const ROOT = fromFileUrl(new URL("../", import.meta.url));

/**
 * Sets `CELLS_CELL_DEADLINE_MS` for every cell of the run (its children pass it on) from
 * `--cell-deadline`, when given.
 *
 * @param flags The parsed flags.
 */
export function useCellDeadline(flags: ParsedFlags): void {
  const ms = flags.int("--cell-deadline", 1);
  if (ms !== undefined) Deno.env.set(CELL_DEADLINE_ENV, String(ms));
}

/** The `--json` flag of a tool, with its default path. */
export function jsonFlag(defaultPath: string): FlagSpec {
  return { name: "--json", value: "PATH", help: "the JSON report", default: defaultPath };
}

/**
 * The flags every task that runs a store over legs × libraries takes, in the order the
 * help lists them: target, cells, legs, libraries, seed, jobs, the JSON report.
 */
export function axisFlags(jsonDefault: string): FlagSpec[] {
  return [
    FLAGS.target,
    FLAGS.cells,
    FLAGS.legs,
    FLAGS.libraries,
    FLAGS.seed,
    FLAGS.jobs,
    jsonFlag(jsonDefault),
  ];
}

/** The shared flags' values, with the vocabulary's defaults. */
export interface SharedOptions {
  /** `--target`: a specifier (default the reference store). */
  target: string;
  /** `--cells`. */
  cells: number[];
  /** `--legs`. */
  legs: LegName[];
  /** `--libraries`: `system`, `fixed` or absolute paths. */
  libraries: string[];
  /** `--seed`, when given. */
  seed?: number;
  /** `--jobs`. */
  jobs: number;
  /** `--quick`. */
  quick: boolean;
  /** `--repeat`. */
  repeat: number;
  /** `--hogs`. */
  hogs: number;
  /** `--tiers`. */
  tiers: TierName[];
  /** `--require-level`, when given. */
  requireLevel?: "BASE" | "DURABLE" | "FULL" | "HARDENED";
}

/** The reference store's target module. */
export const REFERENCE_TARGET: string =
  new URL("../cells/reference_target.ts", import.meta.url).href;

function listOf<T extends string>(
  flags: ParsedFlags,
  name: string,
  valid: readonly T[],
  what: string,
): T[] | undefined {
  const list = flags.list(name);
  if (list === undefined) return undefined;
  if (!list.length) flags.fail(`Invalid ${name}: name some of ${valid.join(", ")}`);
  for (const item of list) {
    if (!valid.includes(item as T)) {
      flags.fail(`Unknown ${what} "${item}" in ${name}: use some of ${valid.join(", ")}`);
    }
  }
  return list as T[];
}

/**
 * Reads the shared flags a tool's table has, checking each value (a bad one is a usage
 * error naming the flag, the value and what to use) and filling the vocabulary's defaults.
 *
 * @param flags The parsed flags.
 * @param judged The cells the tool judges (default every cell): `--cells` picks among them.
 * @returns The values.
 */
export function sharedOptions(
  flags: ParsedFlags,
  judged: readonly number[] = Object.keys(CELLS).map(Number),
): SharedOptions {
  const cellIds = judged.map(String);
  const cells = listOf(flags, "--cells", cellIds, "cell")?.map(Number);
  const legs = flags.has("--legs")
    ? legListArg(flags.string("--legs")!, (m) => flags.fail(m))
    : [...LEGS];
  const libraries = (flags.list("--libraries") ?? ["system", "fixed"]).map((library) => {
    if (library === "system" || library === "fixed") return library;
    if (library.includes("/")) {
      return userPath(library);
    }
    return flags.fail(`Unknown library "${library}" in --libraries: use system, fixed or a path`);
  });
  if (!libraries.length) flags.fail("Invalid --libraries: name system, fixed or a path");
  const level = flags.string("--require-level");
  const levels = LEVELS.filter((l) => l !== "NONE");
  if (level !== undefined && !(levels as readonly string[]).includes(level)) {
    flags.fail(`Invalid --require-level "${level}": use ${levels.join(", ")}`);
  }
  const target = flags.string("--target");
  const seed = flags.int("--seed", 0, 2 ** 31 - 1);
  return {
    target: target === undefined ? REFERENCE_TARGET : targetSpecifier(target, invokedFrom()),
    cells: cells ?? cellIds.map(Number),
    legs,
    libraries: [...new Set(libraries)],
    ...(seed !== undefined ? { seed } : {}),
    jobs: flags.int("--jobs", 1, 64) ?? 2,
    quick: flags.has("--quick"),
    repeat: flags.int("--repeat", 1, 100_000) ?? 1,
    hogs: flags.int("--hogs", 0, 64) ?? 0,
    tiers: listOf(flags, "--tiers", TIERS, "tier") ?? [...TIERS],
    ...(level !== undefined
      ? { requireLevel: level as "BASE" | "DURABLE" | "FULL" | "HARDENED" }
      : {}),
  };
}

/**
 * A target that cannot be found or loaded, or whose `crashPoints` or `childPermissions` is
 * bad, is one usage error naming it (not a FAIL per cell and leg). Returns the flags the target's
 * children get beyond the narrow scope (its `childPermissions`), for the tool to print.
 */
export async function checkTarget(target: string): Promise<string[]> {
  if (target.startsWith("file:") && !exists(fromFileUrl(target))) {
    fail(`Cannot find the target module ${fromFileUrl(target)}: check the --target path`);
  }
  try {
    // Its crash points too: a list the cells read, checked here before any cell runs.
    (await loadTarget(target)).crashPoints?.();
    return widenedFlags(await declaredPermissions(target));
  } catch (error) {
    return fail(error instanceof Error ? error.message : String(error));
  }
}

/**
 * The folder the command was typed in: `deno task` runs a task in the project's root and
 * keeps that folder as `INIT_CWD`, and a path given on the command line means a path from it.
 */
export function invokedFrom(): string {
  const init = Deno.env.get("INIT_CWD");
  return init && isAbsolute(init) ? init : Deno.cwd();
}

/** A path given on the command line, absolute: read from where the command was typed. */
export function userPath(path: string): string {
  return resolve(invokedFrom(), path);
}

/** The path flag `name` given, absolute ({@linkcode userPath}), or `undefined`. */
export function pathFlag(flags: ParsedFlags, name: string): string | undefined {
  const given = flags.string(name);
  return given === undefined ? undefined : userPath(given);
}

/** The `--json` path given, else the tool's default under the project's root. */
export function jsonPath(flags: ParsedFlags, defaultPath: string): string {
  return pathFlag(flags, "--json") ?? join(ROOT, defaultPath);
}

/**
 * Where failing runs keep their evidence: `CELLS_EVIDENCE_DIR`, else `.cache/evidence`
 * under the project's root; always absolute (the children run in folders of their own).
 */
export function evidenceDir(): string {
  return resolve(Deno.env.get("CELLS_EVIDENCE_DIR") || join(ROOT, ".cache/evidence"));
}

/** Writes a tool's JSON report (its folder made first). */
export async function writeJson(path: string, report: unknown): Promise<void> {
  await Deno.mkdir(dirname(path), { recursive: true });
  await Deno.writeTextFile(path, JSON.stringify(report, null, 2) + "\n");
}

/** What a tool's run judges a store on. */
export interface RunAxis {
  /** What the store runs on (from the leg probe). */
  engine: StoreEngine;
  /** The store's own error when it could not open. */
  openError?: string;
  /** The libraries to run on: one `own` or `none` entry for a store not on the binding. */
  libraries: Library[];
  /** Those asked for that are not available here, with why. */
  unavailable: { label: string; why: string }[];
}

/** How {@linkcode runAxis} resolves the libraries and probes the store. */
export interface AxisOptions {
  /** The parsed flags (`--no-build`). */
  flags: ParsedFlags;
  /** How long the store may take to open (default `CELLS_OPEN_DEADLINE_MS`, else 30 s). */
  openDeadlineMs?: number | undefined;
}

/**
 * Probes the store (what it runs on; its own error when it cannot open) and resolves
 * `--libraries` through the one resolver (`runner/libraries.ts`): one run labelled `own`
 * or `none` for a store not on this project's binding, the fixed SQLite built when it is
 * missing unless `--no-build`. Each library not available is said on stderr; none at all
 * is a usage error.
 *
 * @param tool The tool's name, for messages.
 * @param options The shared flags' values.
 * @param axis The parsed flags (`--no-build`) and how long the store may take to open
 * (default `CELLS_OPEN_DEADLINE_MS`, else 30 s).
 * @returns The engine, the store's error and the libraries.
 */
export async function runAxis(
  tool: string,
  options: SharedOptions,
  axis: AxisOptions,
): Promise<RunAxis> {
  const { flags, openDeadlineMs } = axis;
  let deadline: number;
  try {
    deadline = checkRunSettings(openDeadlineMs);
    await evidenceRoot();
  } catch (error) {
    fail((error as Error).message);
  }
  const { engine, openError } = await probeEngine(options.target, hostLibrary(), deadline);
  const resolved = await libraryAxis(engine, options.libraries, {
    build: !flags.has("--no-build"),
    log: (line) => console.error(line),
  });
  for (const u of resolved.unavailable) {
    console.error(`${tool}: skipping the ${u.label} library: ${u.why}`);
  }
  if (!resolved.libraries.length) {
    fail(
      `Cannot run ${tool}: no SQLite library is available: install libsqlite3 or run deno task sqlite`,
    );
  }
  return { engine, ...(openError ? { openError } : {}), ...resolved };
}

/**
 * Makes this tool run a run scope (`harness/process_tree.ts`): everything it starts from
 * now on, at any depth and in any session, is found by {@linkcode endRun}, and is killed
 * if the tool dies first. Call it once the flags are read, before anything starts.
 */
export function startRun(): void {
  startRunScope();
}

/**
 * Ends a tool's run scope: every process the run started that is still running is
 * killed and named (pid and command line) on a FAIL line; the tool fails the run on it.
 *
 * @param tool The tool's name.
 * @returns The survivors (empty after a clean run).
 */
export async function endRun(tool: string): Promise<Survivor[]> {
  const left = await reapRunScope();
  if (left.length) console.log(`${tool}: FAIL: ${survivorsMessage(left, `the ${tool} run`)}`);
  return left;
}
