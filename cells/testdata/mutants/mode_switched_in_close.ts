/**
 * Mutant (legs), a store written elsewhere: it runs every connection in WAL whatever the
 * leg asks, and switches the file to the requested DELETE mode in `close()`. An audit
 * after a clean close reads DELETE; observed at the kills it ran in WAL. The delete leg
 * must be SKIPPED (not honoured), never PASSED. It declares no crash points.
 *
 * @module
 */
import type { SessionDB } from "../../../session_db/mod.ts";
import { setJournalMode } from "./_mutant.ts";
import type { StoreOptions } from "../../contract/target.ts";
import { openStore as openInWal } from "./resolver_ignores_mode.ts";

/** Opens the mutant: WAL while open, the requested mode only once closed. */
export function openStore(path: string, options: StoreOptions): SessionDB {
  const store = openInWal(path, options);
  return new Proxy(store, {
    get(target, key) {
      if (key !== "close") {
        const value = Reflect.get(target, key, target);
        return typeof value === "function" ? value.bind(target) : value;
      }
      return () => {
        target.close();
        if (options.journalMode !== "delete") return;
        setJournalMode(path, "DELETE");
      };
    },
  });
}
