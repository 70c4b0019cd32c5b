/**
 * Faulty target: `openStore` ends the process with exit code 1 (a store that calls
 * `Deno.exit` when its file is not what it expects). Every cell must FAIL at once, naming
 * the exit and the stderr, with no deadline advice.
 *
 * @module
 */

/** Ends the process instead of opening. */
export function openStore(path: string): never {
  console.error(`store: ${path} is not mine, giving up`);
  Deno.exit(1);
}
