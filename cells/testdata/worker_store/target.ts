/**
 * Test target, correct: the reference store kept in a Web Worker, off the main thread (as a
 * Deno application keeps its event loop free); each method posts the call and awaits the
 * answer. The worker loads its own copy of the store's modules, so the crash points a cell's
 * child defines for itself (`sender:afterSend`) are not in the store's list there: they are
 * another's, and the store must open under them.
 *
 * @module
 */
import type { StoreOptions } from "../../contract/target.ts";

/** Opens the store in a worker; the methods answer promises. */
export async function openStore(path: string, options: StoreOptions): Promise<unknown> {
  const worker = new Worker(new URL("./_worker.ts", import.meta.url), { type: "module" });
  const waiting = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  let next = 0;
  worker.onmessage = (event: MessageEvent) => {
    const { id, ok, result, name, message } = event.data;
    const call = waiting.get(id)!;
    waiting.delete(id);
    if (ok) return call.resolve(result);
    const error = new Error(message);
    error.name = name;
    call.reject(error);
  };
  const call = (method: string, args: unknown[]) =>
    new Promise((resolve, reject) => {
      waiting.set(next, { resolve, reject });
      worker.postMessage({ id: next++, method, args });
    });
  const mode = options.journalMode ? { journalMode: options.journalMode } : {};
  const methods = await call("open", [path, mode]) as string[];
  const store: Record<string, (...args: unknown[]) => unknown> = {};
  for (const method of methods) store[method] = (...args) => call(method, args);
  store.close = async () => {
    await call("close", []);
    worker.terminate();
  };
  return store;
}
