/**
 * Test target: the reference store, correct, that owns the folder it is given: it refuses
 * to open a folder holding files whose names do not start with its path's, as a store that
 * checks its data directory does. The suite's own files (journals, barriers, inboxes,
 * copies) must stay out of every store's folder.
 *
 * @module
 */
import { crashPoints as storeCrashPoints, SessionDB } from "../../session_db/mod.ts";
import type { SchemaViolation, StoreOptions } from "../contract/target.ts";
import { plantViolation as plantInReference } from "../reference_target.ts";

/** The store's folder holds files not its own: it did not open. */
class ForeignFilesError extends Error {
  override name = "ForeignFilesError";
}

/** Opens the store, once its folder holds nothing but its own files. */
export function openStore(path: string, options: StoreOptions): SessionDB {
  const slash = path.lastIndexOf("/");
  const folder = path.slice(0, slash) || ".";
  const own = path.slice(slash + 1);
  const foreign = [...Deno.readDirSync(folder)].map((entry) => entry.name)
    .filter((name) => !name.startsWith(own));
  if (foreign.length) {
    throw new ForeignFilesError(
      `Cannot open the store in "${folder}": it holds files not its own: ${foreign.join(", ")}`,
    );
  }
  const mode = options.journalMode ? { journalMode: options.journalMode } : {};
  return SessionDB.open(path, mode);
}

/** The reference store's crash points. */
export function crashPoints(): string[] {
  return storeCrashPoints();
}

/** Plants a schema violation as the reference store's target does. */
export function plantViolation(path: string, violation: SchemaViolation): boolean {
  return plantInReference(path, violation);
}
