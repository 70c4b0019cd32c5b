// A deadline read from the environment: one parser, so that every variable that holds
// milliseconds refuses the same bad values with the same words.

/**
 * The milliseconds an environment variable holds, or `fallback` when it is unset or empty.
 *
 * @param name The variable, e.g. `CELLS_OPEN_DEADLINE_MS`.
 * @param fallback The value when the variable is unset or empty.
 * @returns A whole number of milliseconds above 0.
 * @throws {RangeError} When the variable holds anything else: the message names it and
 * what to use.
 *
 * @example
 * ```ts
 * import { envMilliseconds } from "./env_ms.ts";
 *
 * console.log(envMilliseconds("CELLS_OPEN_DEADLINE_MS", 30_000));
 * ```
 */
export function envMilliseconds(name: string, fallback: number): number {
  return parseMilliseconds(name, Deno.env.get(name), fallback);
}

/**
 * The milliseconds `raw` holds, read as the variable `name`, or `fallback` when it is
 * unset or empty.
 *
 * @param name The variable, for the message.
 * @param raw Its value.
 * @param fallback The value when unset or empty.
 * @returns A whole number of milliseconds above 0.
 * @throws {RangeError} When `raw` holds anything else.
 */
export function parseMilliseconds(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined || raw.trim() === "") return fallback;
  const ms = Number(raw);
  if (!Number.isSafeInteger(ms) || ms <= 0) {
    throw new RangeError(
      `Invalid ${name} "${raw}": use a whole number of milliseconds above 0, or unset it`,
    );
  }
  return ms;
}
