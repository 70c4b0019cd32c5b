/**
 * Whether this process may read and set an environment variable, asked without a prompt:
 * the suite's optional settings are read only where they may be (a user's tests may grant
 * a narrower `--allow-env`), and read as unset elsewhere.
 *
 * @example
 * ```ts
 * import { envGranted } from "./env_granted.ts";
 * console.log(typeof envGranted("CELLS_CRASH_POINTS")); // "boolean"
 * ```
 *
 * @module
 */

/**
 * Whether `variable` is granted.
 *
 * @param variable The variable's name.
 * @returns `true` when granted; `false` when refused, or when it cannot be asked.
 */
export function envGranted(variable: string): boolean {
  try {
    return Deno.permissions.querySync({ name: "env", variable }).state === "granted";
  } catch {
    return false;
  }
}
