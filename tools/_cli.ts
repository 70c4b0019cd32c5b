// What every tool's command line shares: usage errors and the --legs list.
import { type LegName, parseLeg } from "../harness/legs.ts";

/** Prints a usage error and exits 2 (1 is kept for a failed run). */
export function fail(message: string): never {
  console.error(message);
  Deno.exit(2);
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
