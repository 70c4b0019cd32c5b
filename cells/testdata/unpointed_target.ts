/**
 * Test target: the reference store declaring no crash points, so that cells 3 and 4 walk
 * its publish and rewind with the kill and race series (the series' control: the
 * reference must pass them on every leg).
 *
 * @module
 */
import { SessionDB } from "../../session_db/mod.ts";
import type { StoreOptions } from "../contract/target.ts";

/** Opens the reference store. */
export function openStore(path: string, options: StoreOptions): SessionDB {
  return SessionDB.open(path, options.journalMode ? { journalMode: options.journalMode } : {});
}

/** None: every operation is walked by the series instead. */
export function crashPoints(): string[] {
  return [];
}
