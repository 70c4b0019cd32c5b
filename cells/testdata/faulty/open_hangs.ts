/**
 * Faulty target: `openStore` never returns. Every cell must fail within the leg probe's
 * open deadline, naming the target, instead of sitting silent until its overall deadline.
 *
 * @module
 */

/** Never opens. */
export function openStore(_path: string): Promise<never> {
  console.error("open hangs: waiting for a lock that never comes");
  return new Promise(() => {
    setInterval(() => {}, 1000); // keeps the event loop alive, as a real hang would
  });
}
