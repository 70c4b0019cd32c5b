/**
 * The legs mutant that runs in WAL and switches the file to the requested DELETE only in
 * `close()` (`cells/testdata/mutants/mode_switched_in_close.ts`), with the reference
 * store's crash points so the sweep can arm them: its seeded store reads DELETE at rest,
 * its children run in WAL when killed.
 *
 * @module
 */
export { openStore } from "../../../cells/testdata/mutants/mode_switched_in_close.ts";
export { crashPoints } from "../../../session_db/mod.ts";
