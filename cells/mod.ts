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
export * from "./target.ts";
export * from "./register.ts";
export * from "./prefix_durability.ts";
export * from "./consume_once.ts";
export * from "./rotation_atomicity.ts";
export * from "./fork_determinism.ts";
export * from "./outbox_exactly_once.ts";
export * from "./concurrent_writers.ts";
export * from "./fenced_ownership.ts";
export * from "./power_loss.ts";
export * from "./power_loss_prefix_durability.ts";
export * from "./power_loss_rotation_atomicity.ts";
export * from "./power_loss_fork_determinism.ts";
export * from "./power_loss_outbox_exactly_once.ts";
export type { CellOptions } from "./cell_options.ts";
export type { CellReport, CellStatus, Diagnosis, SkipKind, StoreEngine } from "./cell_report.ts";
export * from "./probe_store.ts";
export * from "./diagnoses.ts";
export { type DefinitionOutcome, runDefinitions } from "./run_definitions.ts";
