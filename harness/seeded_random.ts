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
 * @example
 * ```ts
 * import { runSeed } from "./seeded_random.ts";
 * console.log(runSeed(7)); // 7
 * ```
 */
export function runSeed(explicit?: number): number {
  if (explicit !== undefined) return explicit;
  let fromEnv: string | undefined;
  try {
    fromEnv = Deno.env.get("CELLS_SEED");
  } catch {
    fromEnv = undefined; // no env permission: a fresh seed
  }
  if (fromEnv !== undefined && /^\d+$/.test(fromEnv)) return Number(fromEnv);
  return Math.floor(Math.random() * 2 ** 31);
}
