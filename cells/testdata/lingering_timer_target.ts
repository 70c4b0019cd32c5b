/**
 * Test target: the reference store with a heartbeat timer it starts at open and never
 * clears, so a process that opened it stays alive after its work until something ends it.
 * Correct about persistence: every process of the suite that ran it must still end (its
 * children when their script ends, a tier's share when it has written its result).
 *
 * @module
 */
import type { SessionDB } from "../../session_db/mod.ts";
import { openStore as openReference } from "../reference_target.ts";
import type { StoreOptions } from "../contract/target.ts";

export { crashPoints, plantViolation } from "../reference_target.ts";

/** Opens the reference store and starts a timer nothing clears. */
export function openStore(path: string, options: StoreOptions): SessionDB {
  setInterval(() => {}, 1000);
  return openReference(path, options);
}
