/**
 * Test target, correct: the reference store, which before each attempt to take a
 * compression lock signals another process with `Deno.kill` (`SIGCONT` to the process that
 * started it, harmless), as a store that checks a lock holder's liveness that way does.
 * Deno grants that only with an unscoped `--allow-run`, which this module does not declare:
 * the cells that take the lock end in ERROR naming the permission, never in a FAIL
 * (`signalling_declared_target.ts` declares it and passes).
 *
 * @module
 */
import { SessionDB } from "../../session_db/mod.ts";
import type { StoreOptions } from "../contract/target.ts";
import { wrapped } from "./_wrapped.ts";

/** Opens the store. */
export function openStore(path: string, options: StoreOptions): SessionDB {
  const store = SessionDB.open(
    path,
    options.journalMode ? { journalMode: options.journalMode } : {},
  );
  return wrapped(
    store,
    (key, method) =>
      key === "tryAcquireCompressionLock"
        ? (...args: unknown[]) => {
          Deno.kill(Deno.ppid, "SIGCONT");
          return method(...args);
        }
        : method,
  );
}
