/**
 * Faulty target: `openStore` throws after a second of work (a store whose file is locked by
 * another program, say). Every cell must FAIL at once, leading with the store's own error
 * (`openStore threw: Error: ...`), with no deadline advice: its child ended long before
 * any deadline.
 *
 * @module
 */

/** Fails to open, after a while. */
export async function openStore(path: string): Promise<never> {
  await new Promise((resolve) => setTimeout(resolve, 1000));
  throw new Error(`Cannot open session database "${path}": the file is locked by another program`);
}
