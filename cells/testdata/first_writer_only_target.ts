/**
 * Test target, broken for cell 6: the reference store, but only the first process that
 * opened a file may append to it until that process closes it, as a store that takes
 * the file for itself would. Every other process's append or obligation waits 150 ms and
 * refuses with a typed `BusyDeadlineError` (judge it with `minBusyWaitMs` at most that):
 * it loses nothing and never fails silently, yet no second process ever writes, so cell 6
 * has nothing of theirs to judge. Sessions are created by anyone.
 *
 * @module
 */
import { SessionDB } from "../../session_db/mod.ts";
import type { StoreOptions } from "../contract/target.ts";
import { wrapped } from "./_wrapped.ts";

/** The typed refusal of a write the store would not take. */
class BusyDeadlineError extends Error {
  override name = "BusyDeadlineError";
}

/** How long a refused write tries: its busy deadline. */
const REFUSE_AFTER_MS = 150;
const REFUSED = new Set(["appendMessage", "appendMessages", "recordObligation"]);

function pause(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** Opens the store; the process that made `<path>.writer` is the only one that appends. */
export function openStore(path: string, options: StoreOptions): SessionDB {
  const store = SessionDB.open(
    path,
    options.journalMode ? { journalMode: options.journalMode } : {},
  );
  const mark = `${path}.writer`;
  let writer = false;
  try {
    Deno.writeTextFileSync(mark, `${Deno.pid}\n`, { createNew: true });
    writer = true;
  } catch (error) {
    if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
  }
  return wrapped(store, (key, method) => {
    if (key === "close") {
      return () => {
        if (writer) Deno.removeSync(mark);
        return method();
      };
    }
    if (writer || typeof key !== "string" || !REFUSED.has(key)) return method;
    return () => {
      pause(REFUSE_AFTER_MS);
      throw new BusyDeadlineError(`Cannot write to "${path}": another process holds it`);
    };
  });
}
