// What every tool's command line shares: usage errors and the --legs list.
import { type LegName, parseLeg } from "../harness/legs.ts";
import { TASK_PERMISSIONS } from "../harness/permissions.ts";

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
export function legListArg(value: string): LegName[] {
  return value.split(",").map((leg) => {
    try {
      return parseLeg(leg);
    } catch (error) {
      return fail((error as Error).message);
    }
  });
}

/** What a leg's child takes from our environment: Deno's own, and the cells' settings. */
const CELLS_PASSED_ON = [
  "PATH",
  "HOME",
  "DENO_DIR",
  "TMPDIR",
  "CELLS_EVIDENCE_DIR",
  "CELLS_SEED",
  "CELLS_SPAN",
  "CELLS_KILL_SERIES",
  "CELLS_RACE_SERIES",
  "CELLS_OPEN_DEADLINE_MS",
  "CELLS_PROCESS_TREE",
];

/** The permissions of a leg's `deno test`/`deno run` child: everything but the network. */
export const LEG_PERMISSIONS: readonly string[] = ["--no-lock", ...TASK_PERMISSIONS];

/**
 * The cleared environment of a leg's child: its library, its journal-mode leg, and
 * what the cells and Deno need from ours (PATH, HOME, DENO_DIR, evidence, seed, TMPDIR).
 */
export function legChildEnv(
  library: string,
  leg: LegName,
  extra: Record<string, string> = {},
): Record<string, string> {
  const env: Record<string, string> = { DENO_SQLITE_PATH: library, NO_COLOR: "1", ...extra };
  if (leg !== "default") env.SESSION_DB_JOURNAL_MODE = leg;
  for (const name of CELLS_PASSED_ON) {
    const value = Deno.env.get(name);
    if (value !== undefined) env[name] = value;
  }
  return env;
}
