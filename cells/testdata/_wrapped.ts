/**
 * What the test targets that wrap the reference store share: a store whose methods are
 * handed out through a function of their own, and calls made under a lock file's lock.
 *
 * @module
 */

/** A method of the store, bound to it. */
export type Method = (...args: unknown[]) => unknown;

/**
 * The store, each of its methods handed out as `wrap` answers for its name (fields as
 * they are).
 */
export function wrapped<T extends object>(
  store: T,
  wrap: (key: string | symbol, method: Method) => unknown,
): T {
  return new Proxy(store, {
    get(target, key) {
      const value = Reflect.get(target, key);
      return typeof value === "function" ? wrap(key, value.bind(target)) : value;
    },
  });
}

/** Runs calls under an exclusive `flock` of `lock` (Deno's `lockSync`), one at a time. */
export function underLock(lock: Deno.FsFile): <T>(call: () => T) => T {
  return (call) => {
    lock.lockSync(true);
    try {
      return call();
    } finally {
      lock.unlockSync();
    }
  };
}
