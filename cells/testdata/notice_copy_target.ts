/**
 * Test target: the reference store, correct, that also refreshes a notice beside its
 * database on every open (a copy of this module's source, made by `Deno.copyFileSync`,
 * which Linux does in the kernel with `copy_file_range`; never a copy of the open
 * database, which would drop the process's locks on it). The recorder cannot model a
 * copy made in the kernel, so the tiers that replay its log cannot judge this store: they
 * must say so (ERROR), never FAIL it.
 *
 * @module
 */
import { dirname, join } from "node:path";
import { crashPoints as storeCrashPoints, SessionDB } from "../../session_db/mod.ts";
import { fromFileUrl } from "../../internal/path.ts";
import type { StoreOptions } from "../contract/target.ts";

/** Opens the store after refreshing its notice. */
export function openStore(path: string, options: StoreOptions): SessionDB {
  Deno.copyFileSync(fromFileUrl(import.meta.url), join(dirname(path), "NOTICE.txt"));
  return SessionDB.open(path, options.journalMode ? { journalMode: options.journalMode } : {});
}

/** The crash points it honours: the reference store's. */
export function crashPoints(): string[] {
  return storeCrashPoints();
}
