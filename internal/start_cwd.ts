/**
 * The working directory this process started in, read once when the suite's modules first
 * load in it, before any store runs in the process (and kept for the isolates that load
 * them later). A store judged in-process may change the working
 * directory (into its own folder, which the suite later removes); every child the suite
 * starts is started here instead, so that a store's `chdir` never stops the suite.
 *
 * `undefined` where the process may not read it (a child's narrowed permissions): there
 * children start where their parent is, as without the option.
 *
 * @example
 * ```ts
 * import { START_CWD } from "./start_cwd.ts";
 * console.log(START_CWD === undefined || START_CWD.startsWith("/"));
 * ```
 *
 * @module
 */
import { envGranted } from "./env_granted.ts";

export const START_CWD: string | undefined = (() => {
  const shared = sharedEnv();
  const first = shared?.get();
  if (first) return first;
  let cwd: string;
  try {
    cwd = Deno.cwd();
  } catch {
    return undefined;
  }
  shared?.set(cwd);
  return cwd;
})();

/**
 * Where the process's first reading is kept, when it may be: its environment, which every
 * isolate of the process shares. The test runner's parallel workers each load these modules,
 * one perhaps while a store judged in another has moved the process into its folder; keyed by
 * the pid, so that a child inheriting the environment reads its own. Asked without a prompt.
 */
function sharedEnv(): { get(): string | undefined; set(cwd: string): void } | undefined {
  const variable = `CELLS_START_CWD_${Deno.pid}`;
  if (!envGranted(variable)) return undefined;
  return { get: () => Deno.env.get(variable), set: (cwd) => Deno.env.set(variable, cwd) };
}

/**
 * The `cwd` option that starts a child in {@linkcode START_CWD} (none where it is
 * unknown): spread it into a `Deno.Command`'s options.
 */
export const AT_START_CWD: { cwd?: string } = START_CWD ? { cwd: START_CWD } : {};

/**
 * Moves this process back to {@linkcode START_CWD} when a store moved it elsewhere (or
 * into a folder since removed): after a cell, so that the next test's permissions, which
 * Deno resolves against the working directory, can be applied.
 */
export function restoreStartCwd(): void {
  if (!START_CWD) return;
  let now: string | undefined;
  try {
    now = Deno.cwd();
  } catch {
    // Removed under us: go back.
  }
  if (now === START_CWD) return;
  try {
    Deno.chdir(START_CWD);
  } catch {
    // Gone too: nothing better to go to.
  }
}
