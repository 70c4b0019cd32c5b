/**
 * The working directory this process started in, read once when the suite's modules load,
 * before any store runs in the process. A store judged in-process may change the working
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
export const START_CWD: string | undefined = (() => {
  try {
    return Deno.cwd();
  } catch {
    return undefined;
  }
})();

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
