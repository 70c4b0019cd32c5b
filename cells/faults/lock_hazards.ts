/**
 * F3 lock hazards: the recorder names the call when the store's process closes a
 * descriptor of the store's file while the process holds `fcntl` locks on it through
 * another descriptor, loads a second SQLite library, or uses an inherited descriptor of
 * the file in a child forked with it open, before exec. A long-lived writer runs beside
 * a process that reopens the store again and again, so that a dropped lock shows its
 * consequence (an acknowledged append a fresh reader misses); each hazard is a FAIL
 * naming the call, whatever the consequence.
 *
 * @example
 * ```ts
 * import { lockHazardsClause } from "./lock_hazards.ts";
 * console.log(lockHazardsClause.id, lockHazardsClause.name); // "F3" "F3 lock hazards"
 * ```
 *
 * @module
 */
import { HazardCode } from "../../recorder/log.ts";
import { runHazards } from "./_hazard_run.ts";
import type { FaultClause } from "./types.ts";

/** F3: a close that drops the process's locks, a second SQLite, a forked child's use. */
export const lockHazardsClause: FaultClause = {
  id: "F3",
  name: "F3 lock hazards",
  run: (options) =>
    runHazards(options, {
      codes: [HazardCode.lockDrop, HazardCode.secondSqlite, HazardCode.forkUse],
      what: "the store's process committed a lock hazard",
    }),
};
