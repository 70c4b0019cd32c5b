/**
 * What the test targets that wrap the reference store share: a store whose methods are
 * handed out through a function of their own, and calls made under a lock file's lock or
 * a lock directory.
 *
 * @module
 */
import { processAlive } from "../../session_db/process.ts";

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

/**
 * Runs calls (`locked`) under a lock directory at `lock` (proper-lockfile's kind of lock, with the
 * holder's pid inside), one at a time. It is taken by renaming a folder already holding the
 * pid onto `lock` (a rename onto a folder that is not empty fails), so it never exists
 * without its holder's pid; a lock whose holder is dead is moved aside and removed under a
 * `flock` of `<lock>.break`, which releases take too, so that a lock is broken only while
 * the dead holder's own is there.
 */
export function underLockDir(lock: string): {
  locked: <T>(call: () => T) => T;
  close(): void;
} {
  const pause = new Int32Array(new SharedArrayBuffer(4));
  const breaker = Deno.openSync(`${lock}.break`, { read: true, write: true, create: true });
  const take = () => {
    const mine = `${lock}.${Deno.pid}.new`;
    Deno.mkdirSync(mine, { recursive: true });
    Deno.writeTextFileSync(`${mine}/pid`, String(Deno.pid));
    for (;;) {
      try {
        Deno.renameSync(mine, lock);
        return;
      } catch (error) {
        if (!(error instanceof Deno.errors.AlreadyExists) && !/not empty/i.test(String(error))) {
          throw error;
        }
      }
      breakIfDead();
      Atomics.wait(pause, 0, 0, 2);
    }
  };
  const breakIfDead = () => {
    breaker.lockSync(true);
    try {
      let holder: number;
      try {
        holder = Number(Deno.readTextFileSync(`${lock}/pid`));
      } catch {
        return; // released meanwhile
      }
      if (processAlive(holder)) return;
      const aside = `${lock}.${Deno.pid}.stale`;
      Deno.renameSync(lock, aside);
      Deno.removeSync(aside, { recursive: true });
    } finally {
      breaker.unlockSync();
    }
  };
  // Under the breakers' lock too: a breaker that read a holder's pid must find that holder's
  // lock still there when it sees the holder dead.
  const release = () => {
    const aside = `${lock}.${Deno.pid}.old`;
    breaker.lockSync(true);
    try {
      Deno.renameSync(lock, aside);
    } finally {
      breaker.unlockSync();
    }
    Deno.removeSync(aside, { recursive: true });
  };
  return {
    locked: (call) => {
      take();
      try {
        return call();
      } finally {
        release();
      }
    },
    close: () => breaker.close(),
  };
}
