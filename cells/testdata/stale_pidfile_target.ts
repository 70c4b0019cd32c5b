/**
 * Test target: the reference store behind a pid file it never breaks, broken for every
 * clause. Its open creates `<path>.pid` (only if missing) and its close removes it; an open
 * that finds the file waits, polling, until it is gone. A crash leaves the file behind, so
 * the store never opens again: the SIGKILL cells' recoverers hang until their deadline, and
 * the power-loss tiers, which judge each state in their own process, must FAIL it naming
 * the state instead of waiting without end.
 *
 * @module
 */
import { SessionDB } from "../../session_db/mod.ts";
import type { StoreOptions } from "../contract/target.ts";
import { wrapped } from "./_wrapped.ts";

/** Opens the store once no other life holds its pid file. */
export async function openStore(path: string, options: StoreOptions): Promise<SessionDB> {
  const pidFile = `${path}.pid`;
  for (;;) {
    try {
      Deno.writeTextFileSync(pidFile, String(Deno.pid), { createNew: true });
      break;
    } catch (error) {
      if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const mode = options.journalMode ? { journalMode: options.journalMode } : {};
  const store = SessionDB.open(path, mode);
  return wrapped(store, (key, method) => {
    if (key !== "close") return method;
    return () => {
      try {
        return method();
      } finally {
        Deno.removeSync(pidFile);
      }
    };
  });
}
