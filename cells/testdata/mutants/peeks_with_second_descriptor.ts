/**
 * Mutant (fault tier, F3): after each append it peeks at its database file's header
 * through a descriptor of its own (`Deno.openSync`, read, close). Closing that descriptor
 * drops every `fcntl` lock the process holds on the file: in WAL, the read lock SQLite
 * keeps between transactions, so another process may checkpoint, reset or delete the
 * `-wal` under it. In DELETE mode it holds no lock between transactions, and the same
 * close drops nothing.
 *
 * @module
 */
import type { SessionDB } from "../../../session_db/mod.ts";
import type { StoreOptions } from "../../contract/target.ts";
import { openMutant } from "./_mutant.ts";

/** Reads the file's first 100 bytes through a descriptor of its own, then closes it. */
function peekHeader(path: string): void {
  const file = Deno.openSync(path, { read: true });
  try {
    file.readSync(new Uint8Array(100));
  } finally {
    file.close();
  }
}

/** Opens the mutant: the reference store, peeking at its file after each append. */
export function openStore(path: string, options: StoreOptions): SessionDB {
  return openMutant(path, options, ({ store }) => ({
    appendMessage: (...args: Parameters<SessionDB["appendMessage"]>) => {
      const id = store.appendMessage(...args);
      peekHeader(path);
      return id;
    },
  }));
}
