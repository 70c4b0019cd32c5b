/**
 * A store opened as an application opens it beside other processes of the store: its open,
 * and every call but `close`, made again while refused with the contract's busy refusal (an
 * error named `BusyDeadlineError`, which changed nothing), for up to a minute. The cells'
 * processes use it (`openStoreFor`), and so does a judge that reads while other processes
 * write; the processes that judge the refusal itself open the store plainly.
 *
 * @module
 */
import { openTargetStore, type Store } from "./target.ts";
import { retriedWhileBusy } from "./typed.ts";

/**
 * Opens the store named by `target` at `path`, the open and each later call made again while
 * refused as busy.
 *
 * @param target The target module's specifier.
 * @param path The store's path.
 * @returns The open store.
 * @example
 * ```ts
 * import { openRetriedWhileBusy } from "./busy_retried.ts";
 * const target = new URL("../reference_target.ts", import.meta.url).href;
 * const store = await openRetriedWhileBusy(target, `${Deno.makeTempDirSync()}/s.db`);
 * await store.createSession("s");
 * await store.close();
 * ```
 */
export async function openRetriedWhileBusy(target: string, path: string): Promise<Store> {
  return retryingWhileBusy(await retriedWhileBusy(() => openTargetStore(target, path)));
}

/**
 * The store, each of its methods but `close` making its call again while it is refused as
 * busy. A store may refuse any write beside other writing processes so, after its busy
 * deadline, changing nothing: that is no failure of the write, and the cells judge the
 * writes that were made, not the store's contention.
 */
function retryingWhileBusy(store: Store): Store {
  return new Proxy(store, {
    get(target, key) {
      const value = Reflect.get(target, key);
      if (typeof value !== "function" || key === "close") return value;
      return (...args: unknown[]) => retriedWhileBusy(() => value.apply(target, args));
    },
  });
}
