/**
 * Test target: the reference store, open at most once per process and path (as an LMDB
 * environment is): a second open of a path this process holds open is refused with an
 * error of the store's own until the first is closed. Several processes may open it at
 * once. Correct: a cell that wants another writer starts another process.
 *
 * @module
 */
import { crashPoints as storeCrashPoints, SessionDB } from "../../session_db/mod.ts";
import type { StoreOptions } from "../contract/target.ts";

/** Thrown by a second open, in one process, of a path open already. */
export class AlreadyOpenError extends Error {
  override name = "AlreadyOpenError";
}

const open = new Set<string>();

/** Opens the reference store unless this process holds `path` open already. */
export function openStore(path: string, options: StoreOptions): SessionDB {
  const key = `${Deno.realPathSync(path.slice(0, path.lastIndexOf("/")) || "/")}${
    path.slice(path.lastIndexOf("/"))
  }`;
  if (open.has(key)) {
    throw new AlreadyOpenError(`Cannot open "${path}": this process has it open already`);
  }
  const db = SessionDB.open(path, options.journalMode ? { journalMode: options.journalMode } : {});
  open.add(key);
  const close = db.close.bind(db);
  db.close = () => {
    open.delete(key);
    close();
  };
  return db;
}

/** The reference store's crash points. */
export function crashPoints(): string[] {
  return storeCrashPoints();
}
