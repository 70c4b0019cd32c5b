/**
 * F4 files pulled from under a writer: a store (or its repair or cleanup path) that
 * unlinks or renames its database, `-wal`, `-journal` or `-shm` while another process
 * has it open fails, naming the call and the other process. The recorder looks the file
 * up in every other process's `/proc/<pid>/fd` just before the call.
 *
 * @example
 * ```ts
 * import { pulledFilesClause } from "./pulled_files.ts";
 * console.log(pulledFilesClause.id); // "F4"
 * ```
 *
 * @module
 */
import { HazardCode } from "../../recorder/log.ts";
import { runHazards } from "./_hazard_run.ts";
import type { FaultClause } from "./types.ts";

/** F4: an unlink or rename of the store's files while another process has them open. */
export const pulledFilesClause: FaultClause = {
  id: "F4",
  name: "F4 files pulled from under a writer",
  run: (options) =>
    runHazards(options, {
      codes: [HazardCode.pulled],
      what: "the store's process pulled a file from under another process",
    }),
};
