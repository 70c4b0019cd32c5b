/**
 * A seeded pseudo-random generator (mulberry32): the same seed gives the same
 * sequence, so a run's random choices (which acknowledgement to die at, which step to
 * kill) replay exactly. Wall-clock kill timing is not a choice and cannot replay.
 *
 * @param seed A 32-bit seed.
 * @returns A function returning numbers in [0, 1).
 * @example
 * ```ts
 * import { seededRandom } from "./seeded_random.ts";
 * const random = seededRandom(42);
 * console.log(Math.floor(random() * 100) === Math.floor(seededRandom(42)() * 100)); // true
 * ```
 */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The seed of a run: the explicit one, else `CELLS_SEED`, else a fresh random one.
 *
 * @param explicit A seed passed as an option.
 * @returns The seed to use and to print.
 * @throws {RangeError} When `CELLS_SEED` is set to anything but a seed: a replay asked for
 * must not quietly draw fresh choices.
 * @example
 * ```ts
 * import { runSeed } from "./seeded_random.ts";
 * console.log(runSeed(7)); // 7
 * ```
 */
export function runSeed(explicit?: number): number {
  if (explicit !== undefined) return explicit;
  return envSeed() ?? Math.floor(Math.random() * 2 ** 31);
}

/**
 * The seed `CELLS_SEED` asks for, if any.
 *
 * @returns The seed, or `undefined` when the variable is unset, empty or not readable.
 * @throws {RangeError} When it holds anything but a whole number from 0 to 2^31 - 1.
 * @example
 * ```ts
 * import { envSeed } from "./seeded_random.ts";
 * console.log(envSeed()); // undefined unless CELLS_SEED is set
 * ```
 */
export function envSeed(): number | undefined {
  let raw: string | undefined;
  try {
    raw = Deno.env.get("CELLS_SEED");
  } catch {
    return undefined; // no env permission: a fresh seed
  }
  return parseSeed(raw);
}

/**
 * The seed `raw` holds as `CELLS_SEED`.
 *
 * @param raw The variable's value.
 * @returns The seed, or `undefined` when `raw` is unset or empty.
 * @throws {RangeError} When it holds anything but a whole number from 0 to 2^31 - 1.
 * @example
 * ```ts
 * import { parseSeed } from "./seeded_random.ts";
 * console.log(parseSeed("42")); // 42
 * ```
 */
export function parseSeed(raw: string | undefined): number | undefined {
  if (raw === undefined || raw.trim() === "") return undefined;
  const seed = Number(raw);
  if (!/^\s*\d+\s*$/.test(raw) || seed > 2 ** 31 - 1) {
    throw new RangeError(
      `Invalid CELLS_SEED "${raw}": use the seed a run reported, a whole number from 0 to 2147483647, or unset it`,
    );
  }
  return seed;
}
