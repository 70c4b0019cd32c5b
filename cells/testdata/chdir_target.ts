/**
 * Test target: the reference store, which makes its database's folder the working
 * directory at open (as a store that then names its files relatively would). Correct:
 * a suite process that judges it in-process (and later removes that folder) must still
 * start its children.
 *
 * @module
 */
import type { SessionDB } from "../../session_db/mod.ts";
import { openStore as openReference } from "../reference_target.ts";
import type { StoreOptions } from "../contract/target.ts";

export { crashPoints, plantViolation } from "../reference_target.ts";

/** Moves into the database's folder, then opens the reference store. */
export function openStore(path: string, options: StoreOptions): SessionDB {
  Deno.chdir(path.slice(0, path.lastIndexOf("/")) || "/");
  return openReference(path, options);
}
