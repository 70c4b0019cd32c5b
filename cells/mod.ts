/**
 * The conformance cells, one per clause of the session-store persistence contract,
 * as `Deno.test` definitions for any target module whose `openStore(path, options)`
 * returns the store under test.
 *
 * @example
 * ```ts
 * import { registerCells } from "./mod.ts";
 * await registerCells({ target: new URL("./reference_target.ts", import.meta.url) });
 * ```
 *
 * @module
 */
export * from "./contract/target.ts";
export * from "./register.ts";
export * from "./prefix_durability/cell.ts";
export * from "./consume_once/cell.ts";
export * from "./rotation_atomicity/cell.ts";
export * from "./fork_determinism/cell.ts";
export * from "./outbox_exactly_once/cell.ts";
export * from "./concurrent_writers/cell.ts";
export * from "./fenced_ownership/cell.ts";
export * from "./power_loss/mod.ts";
export * from "./prefix_durability/power_loss.ts";
export * from "./rotation_atomicity/power_loss.ts";
export * from "./fork_determinism/power_loss.ts";
export * from "./outbox_exactly_once/power_loss.ts";
export type { CellOptions } from "./engine/options.ts";
export type { CellReport, CellStatus, Diagnosis, SkipKind, StoreEngine } from "./engine/report.ts";
export * from "./engine/probe_store.ts";
export * from "./engine/diagnoses.ts";
export { type DefinitionOutcome, runDefinitions } from "./engine/run_definitions.ts";
