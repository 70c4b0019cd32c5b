/**
 * Test target: the mutant `invariants_blind` (a state planted on disk is served as if
 * whole) whose `plantViolation` answers `1` when it planted, as SQLite's `changes()` does.
 * Cell 13 must judge what it planted, and FAIL it.
 *
 * @module
 */
export { crashPoints, openStore } from "../mutants/invariants_blind.ts";
export { plantViolation } from "../planted_as_integer_target.ts";
