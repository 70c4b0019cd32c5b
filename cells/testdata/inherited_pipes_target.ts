/**
 * Test target: the reference store, whose open starts a helper process that inherits the
 * store process's stdout and stderr (what `Deno.Command`'s `spawn` does by default), stopped
 * by `close`. A process killed mid-write leaves its helper holding the pipes its parent
 * reads. Correct otherwise: every cell and tier must pass it, and no helper may be left
 * running after them (`cells/moves/tree_kill_itest.ts`).
 *
 * @module
 */
import { crashPoints as storeCrashPoints, SessionDB } from "../../session_db/mod.ts";
import type { ChildPermissions, StoreOptions } from "../contract/target.ts";

/** What the helper runs: recognisable in a process list, and long. */
export const HELPER_ARGS = ["3599.5"];

/** The helper is `sleep`, found on PATH. */
export const childPermissions: ChildPermissions = { run: ["sleep"] };

/** Opens the reference store and starts its helper; `close` stops the helper first. */
export function openStore(path: string, options: StoreOptions): SessionDB {
  const db = SessionDB.open(path, options.journalMode ? { journalMode: options.journalMode } : {});
  const helper = new Deno.Command("sleep", { args: HELPER_ARGS, stdin: "null" }).spawn();
  helper.unref();
  const close = db.close.bind(db);
  db.close = () => {
    try {
      helper.kill("SIGKILL");
    } catch {
      // Gone already.
    }
    close();
  };
  return db;
}

/** The reference store's crash points. */
export function crashPoints(): string[] {
  return storeCrashPoints();
}
