/**
 * Test target: the reference store, whose open also starts a daemon in its own session
 * (`setsid`, as a store with a background compactor would) that runs until the store is
 * closed. A child killed mid-write never closes it: only a kill that takes the child's
 * whole tree ends its daemon. Correct otherwise: every cell must pass, and nothing may be
 * left running after them (`cells/moves/tree_kill_itest.ts`).
 *
 * @module
 */
import { crashPoints as storeCrashPoints, SessionDB } from "../../session_db/mod.ts";
import type { ChildPermissions, StoreOptions } from "../contract/target.ts";

/** What the daemon runs: recognisable in a process list, and long. */
export const DAEMON_ARGS = ["3599.25"];

/** The daemon is `sleep`, found on PATH. */
export const childPermissions: ChildPermissions = { run: ["sleep"] };

/** Opens the reference store and starts its daemon; `close` stops the daemon first. */
export function openStore(path: string, options: StoreOptions): SessionDB {
  const db = SessionDB.open(path, options.journalMode ? { journalMode: options.journalMode } : {});
  const daemon = new Deno.Command("sleep", {
    args: DAEMON_ARGS,
    detached: true,
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  daemon.unref();
  const close = db.close.bind(db);
  db.close = () => {
    try {
      daemon.kill("SIGKILL");
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
