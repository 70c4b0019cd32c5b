/**
 * Test target, broken for cell 2: the store of `lockdir_serialised_target.ts`, but its
 * `requestHandoff` checks the handoff's state under one hold of its lock directory and
 * writes the request under another, with raw SQL that checks nothing. Another process can
 * request and claim the handoff between the two: the stop before the second take of the
 * lock lets it, and the stale request then overwrites a running claim.
 *
 * @module
 */
import type { SessionDB } from "../../session_db/mod.ts";
import { Database } from "../../session_db/sqlite/mod.ts";
import type { StoreOptions } from "../contract/target.ts";
import { openStore as openSerialised } from "./lockdir_serialised_target.ts";
import { underLockDir, wrapped } from "./_wrapped.ts";

/** Opens the store; its requests check and write under two holds of the lock directory. */
export function openStore(path: string, options: StoreOptions): SessionDB {
  const store = openSerialised(path, options);
  const raw = new Database(path);
  raw.exec("PRAGMA busy_timeout = 5000");
  const { locked, close } = underLockDir(`${path}.lock`);
  const requestHandoff = (sessionId: string, platform: string): boolean => {
    const state = store.getHandoffState(sessionId);
    if (state === "pending" || state === "running") return false;
    return locked(() =>
      raw.exec(
        "UPDATE sessions SET handoff_state = 'pending', handoff_platform = ?, handoff_error = NULL WHERE id = ?",
        platform,
        sessionId,
      ) === 1
    );
  };
  return wrapped(store, (key, method) => {
    if (key === "requestHandoff") return requestHandoff;
    if (key !== "close") return method;
    return () => {
      raw.close();
      close();
      return method();
    };
  });
}
