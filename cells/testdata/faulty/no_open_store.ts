/**
 * Faulty target: a module that loads but exports no `openStore`.
 *
 * @module
 */

/** Opens nothing: the export a target needs is named `openStore`. */
export function open(): undefined {
  return undefined;
}
