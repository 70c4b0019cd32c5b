/**
 * The crash harness: permission-scoped child processes, file barriers, bounded waits
 * that surface a dead child's stderr, acknowledgement journals, kill-while-alive,
 * disjoint exit codes, journal-mode legs with their on-disk audit, and evidence.
 *
 * @example
 * ```ts
 * import { readAckJournal, waitFor } from "./mod.ts";
 * const path = `${Deno.makeTempDirSync()}/acks.jsonl`;
 * Deno.writeTextFileSync(path, '{"i":0}\n{"i":1}\n{"i":');
 * await waitFor(() => readAckJournal(path).length === 2, { what: "two acks", deadlineMs: 1000 });
 * ```
 *
 * @module
 */
export {
  Child,
  classifyExit,
  type ExitClass,
  type ExitKind,
  KillError,
  killWhileAlive,
  liveChildren,
  LOST,
  reapAll,
  spawnChild,
  type SpawnOptions,
  TIMED_OUT,
  WON,
} from "./child.ts";
export type { ProcessTree, Survivor, TreeMechanism } from "./process_tree.ts";
export { WaitError, waitFor, type WaitOptions } from "./wait_for.ts";
export { Activity } from "./activity.ts";
export { awaitBarrier, countReady, releaseBarrier, signalReady } from "./barrier.ts";
export { AckJournalError, AckWriter, countAcks, readAckJournal } from "./ack_journal.ts";
export {
  currentLeg,
  effectiveModeOrSkip,
  journalModeOf,
  type JournalObservation,
  type Leg,
  type LegAudit,
  legEnv,
  LegError,
  type LegName,
  LEGS,
  legVerdict,
  type ObservedMode,
  observeJournalMode,
  parseLeg,
} from "./legs.ts";
export { RunDir } from "./evidence.ts";
export { integrityCheck, integrityIfSqlite } from "./db_audit.ts";
export { killSelf } from "./self_kill.ts";
export { envSeed, runSeed, seededRandom } from "./seeded_random.ts";
export {
  type ChildPermissions,
  type ChildScope,
  scopedPermissions,
  widenedFlags,
} from "./permissions.ts";
export { HarnessError, isHarnessError } from "./harness_error.ts";
