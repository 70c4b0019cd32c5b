import { killSelf as kill } from "../session_db/process.ts";

/**
 * Kills the calling process with SIGKILL at once: no unwinding, no flushing, like a
 * crash. Needs only `--allow-ffi` for the SQLite library (libc's `kill` is reached
 * through it), so children stay without `--allow-run`.
 *
 * @example
 * ```ts
 * import { killSelf } from "./self_kill.ts";
 * if (Deno.args.includes("--crash")) killSelf();
 * ```
 */
export function killSelf(): never {
  return kill();
}
