// What every tool's command line shares: usage errors and the --legs list.
import { type LegName, parseLeg } from "../harness/legs.ts";

/** Prints a usage error and exits 2 (1 is kept for a failed run). */
export function fail(message: string): never {
  console.error(message);
  Deno.exit(2);
}

/**
 * Walks a tool's arguments: each flag with a function that takes its value (the next
 * argument; a usage error when there is none).
 */
export function* flagsOf(args: string[]): Generator<[string, () => string]> {
  for (let i = 0; i < args.length; i++) {
    const flag = args[i]!;
    yield [flag, () => {
      const value = args[++i];
      if (value === undefined) fail(`Invalid arguments: ${flag} needs a value`);
      return value;
    }];
  }
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

/** The permissions of a leg's `deno test`/`deno run` child: everything but the network. */
export const LEG_PERMISSIONS: readonly string[] = [
  "--no-lock",
  "--allow-read",
  "--allow-write",
  "--allow-env",
  "--allow-ffi",
  "--allow-run",
  "--allow-sys",
];

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
  for (const name of ["PATH", "HOME", "DENO_DIR", "CELLS_EVIDENCE_DIR", "CELLS_SEED", "TMPDIR"]) {
    const value = Deno.env.get(name);
    if (value !== undefined) env[name] = value;
  }
  return env;
}
