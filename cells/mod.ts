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
// Registering the cells.
export {
  type CellId,
  CELLS,
  conformanceCells,
  registerCells,
  type RegisterCellsOptions,
} from "./register.ts";
export type { CellOptions } from "./engine/options.ts";
export type { Leg, LegName } from "../harness/legs.ts";

// The target contract.
export {
  CELL_METHODS,
  CELL_OPTIONAL_METHODS,
  type CellMessage,
  type ChildPermissions,
  type ChildPermissionsDeclaration,
  DELIVERY_POLICIES,
  type DeliveryPolicy,
  loadTarget,
  type MaybePromise,
  type PermissionContext,
  type RecoveredObligationView,
  type SchemaViolation,
  type Store,
  type StoredMessage,
  type StoredObligation,
  type StoredSession,
  type StoreMethod,
  type StoreOptions,
  TargetError,
  type TargetModule,
} from "./contract/target.ts";

// One definition function per cell, with its options.
export { prefixDurabilityCell, type PrefixDurabilityOptions } from "./prefix_durability/cell.ts";
export { consumeOnceCell, type ConsumeOnceOptions } from "./consume_once/cell.ts";
export { rotationAtomicityCell, type RotationAtomicityOptions } from "./rotation_atomicity/cell.ts";
export { forkDeterminismCell, type ForkDeterminismOptions } from "./fork_determinism/cell.ts";
export {
  outboxExactlyOnceCell,
  type OutboxExactlyOnceOptions,
} from "./outbox_exactly_once/cell.ts";
export { concurrentWritersCell, type ConcurrentWritersOptions } from "./concurrent_writers/cell.ts";
export {
  type FencedOwner,
  fencedOwnershipCell,
  type FencedOwnershipOptions,
} from "./fenced_ownership/cell.ts";
export { leaseRenewalCell, type LeaseRenewalOptions } from "./lease_renewal/cell.ts";
export { pendingHandoffsCell, type PendingHandoffsOptions } from "./pending_handoffs/cell.ts";

// The power-loss tier's cells.
export {
  type CrashState,
  type FileSet,
  type PowerLossKill,
  type PowerLossOptions,
  type Profile,
  type TornWrite,
} from "./power_loss/mod.ts";
export { powerLossCells } from "./power_loss_cells.ts";
export { powerLossPrefixCell } from "./prefix_durability/power_loss.ts";
export { powerLossRotationCell } from "./rotation_atomicity/power_loss.ts";
export { powerLossForkCell } from "./fork_determinism/power_loss.ts";
export { powerLossOutboxCell } from "./outbox_exactly_once/power_loss.ts";
export { powerLossResolutionCell } from "./resume_resolution/power_loss.ts";
export { powerLossBatchCell } from "./batch_atomicity/power_loss.ts";
export { powerLossEndsCell } from "./ends_and_reopens/power_loss.ts";
export { powerLossRenewalCell } from "./lease_renewal/power_loss.ts";
export { powerLossHandoffCell } from "./pending_handoffs/power_loss.ts";

// What the cells report, and the known failure patterns they diagnose.
export {
  type CellReport,
  type Diagnosis,
  readCellReports,
  type SkipKind,
  type Status,
  type StoreEngine,
} from "./engine/report.ts";
export {
  DIAGNOSES,
  diagnosesOf,
  diagnosis,
  diagnosisLines,
  type PatternId,
} from "./engine/diagnoses.ts";

// Probing a store, and running definitions outside `deno test`.
export {
  engineLabel,
  type ProbeFailure,
  type ProbeOptions,
  type ProbeStage,
  probeStore,
  type StoreProbe,
} from "./engine/probe_store.ts";
export { type DefinitionOutcome, runDefinitions } from "./engine/run_definitions.ts";
