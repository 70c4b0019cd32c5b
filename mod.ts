/**
 * Crash/resume persistence conformance cells for session stores, in Deno: real
 * SIGKILLs to separate processes, and the contract proved from what survives on disk.
 *
 * Register every cell against your own store (a module whose `openStore(path, options)`
 * returns it), by URL or by path:
 *
 * ```ts
 * import { registerCells } from "./mod.ts";
 * await registerCells({ target: new URL("./cells/reference_target.ts", import.meta.url) });
 * ```
 *
 * This module holds what a user of the suite needs: registering the cells, the target
 * contract, the reference store (`SessionDB`) with its base error and the errors a
 * caller acts on. The rest is a subpath away: `./cells` (each cell's definition function,
 * the power-loss tier, the cell reports `CellReport`, the store probe, the diagnoses),
 * `./runner` (the engine's typed results: `runCells`, `runConformance`, levels),
 * `./recorder` (the file-system call recorder and its crash states), `./harness`
 * (children, barriers, waits, legs, evidence) and `./session-db` (every store error and
 * type, the FFI SQLite binding `Database`).
 *
 * @module
 */
export {
  type CellId,
  CELLS,
  conformanceCells,
  registerCells,
  type RegisterCellsOptions,
} from "./cells/register.ts";
export type { CellOptions } from "./cells/engine/options.ts";
export type { Leg, LegName } from "./harness/legs.ts";
export {
  CELL_METHODS,
  type CellMessage,
  type DeliveryPolicy,
  type MaybePromise,
  type RecoveredObligationView,
  type Store,
  type StoredMessage,
  type StoredObligation,
  type StoredSession,
  type StoreMethod,
  type StoreOptions,
  TargetError,
  type TargetModule,
} from "./cells/contract/target.ts";
export {
  type CompressionPublish,
  type HandoffState,
  type Message,
  MESSAGE_ROLES,
  type MessageRole,
  type NewMessage,
  type NewSession,
  type Obligation,
  type ObligationState,
  type RecoveredObligation,
  type Session,
  type SessionDBOptions,
  type SweepOptions,
} from "./session_db/types.ts";
export { SessionDB } from "./session_db/session_db.ts";
export type { JournalMode } from "./session_db/journal_mode.ts";
export {
  BusyDeadlineError,
  CompressionSessionClosedError,
  RewindConflictError,
  SessionDBError,
} from "./session_db/errors.ts";
