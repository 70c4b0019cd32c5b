/**
 * Faulty target: `openStore` throws at once. Every task must FAIL it (exit 1), its
 * message leading with the store's own error, never SKIP or PASS it.
 *
 * @module
 */

/** Throws: the store's file is refused. */
export function openStore(path: string): never {
  throw new Error(`the store refuses ${path.split("/").at(-1)}: schema version 99 is newer`);
}
