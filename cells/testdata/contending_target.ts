/**
 * Test target: the reference store, correct, whose writes contend as on a slow disk. Each
 * write takes a lock of its own (a `flock` on a file beside the store), waiting for it at
 * most one second, the least busy deadline the contract allows, and one write in ten keeps
 * it 1.2 s after its commit; a writer that waited the second in vain is refused with an error
 * named `BusyDeadlineError`, having changed nothing, as the contract allows beside other
 * writing processes. It opens under the same lock (a migration's), refused as busy alike.
 * Every cell must take the refusal as one and pass.
 *
 * @module
 */
import { BusyDeadlineError, type SessionDB } from "../../session_db/mod.ts";
import type { StoreOptions } from "../contract/target.ts";
import { wrapped } from "./_wrapped.ts";
import { openStore as openReference } from "./unpointed_target.ts";

/** How long a write waits for the lock before it is refused. */
const BUSY_DEADLINE_MS = 1_000;
/** How long one write in ten keeps the lock after its commit. */
const HOLD_MS = 1_200;
/** The calls that only read: they take no lock. */
const READS = new Set([
  "close",
  "getMessages",
  "getSession",
  "getHandoffState",
  "listPendingHandoffs",
  "listSessions",
  "findLiveCompressionChild",
  "getObligation",
  "listObligations",
  "messageCount",
  "checkInvariants",
]);

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Runs `call` holding the lock of `lockPath` (and `holdMs` after it), or refuses after the busy
 * deadline.
 */
async function contended<T>(lockPath: string, call: () => Promise<T>, holdMs: number): Promise<T> {
  const file = await Deno.open(lockPath, { create: true, write: true });
  try {
    const started = performance.now();
    while (!(await file.tryLock(true))) {
      const waited = performance.now() - started;
      if (waited >= BUSY_DEADLINE_MS) {
        throw new BusyDeadlineError(
          `Cannot write: the store stayed locked for ${Math.round(waited)} ms`,
        );
      }
      await sleep(5);
    }
    try {
      const result = await call();
      if (holdMs) await sleep(holdMs);
      return result;
    } finally {
      await file.unlock();
    }
  } finally {
    file.close();
  }
}

/** When a write or the open keeps the lock after its work. */
export interface Holds {
  /** The chance that a write keeps it `HOLD_MS`. */
  write: number;
  /** How long the open keeps it. */
  openMs: number;
}

/** Opens the store, under the lock as a migration would be, its calls holding it as `holds` says. */
export async function openContending(
  path: string,
  options: StoreOptions,
  holds: Holds,
): Promise<SessionDB> {
  const lockPath = `${path}.write-lock`;
  const writeHold = () => Math.random() < holds.write ? HOLD_MS : 0;
  return wrapped(
    await contended(lockPath, () => Promise.resolve(openReference(path, options)), holds.openMs),
    (key, method) =>
      typeof key === "string" && !READS.has(key)
        ? (...args: unknown[]) =>
          contended(lockPath, async () => await method(...args), writeHold())
        : method,
  );
}

/** Opens the store: one write in ten keeps the lock. */
export function openStore(path: string, options: StoreOptions): Promise<SessionDB> {
  return openContending(path, options, { write: 0.1, openMs: 0 });
}
