/**
 * The crash-sweep engine: one engine for crashes at named points and before every
 * recorded file-system call, under SIGKILL and under power loss, and the power-loss cells,
 * each returning the engine's typed results (`runner/result.ts`). The tools
 * (`deno task sweep`, `deno task powerloss-cells`) and the conformance front door are
 * thin command lines over {@linkcode sweepTier} and {@linkcode powerLossCellsTier}.
 *
 * @example
 * ```ts ignore
 * import { sweepTier } from "./mod.ts";
 * const { run, results } = await sweepTier({
 *   target: "cells/reference_target.ts",
 *   tier: "syscalls-crash",
 *   legs: ["default"],
 *   libraries: [{ label: "system", path: "/usr/lib/x86_64-linux-gnu/libsqlite3.so.0" }],
 *   quick: true,
 *   evidenceDir: ".cache/evidence",
 * });
 * console.log(run.status, results.map((r) => `${r.clause} ${r.status} (${r.judged})`));
 * ```
 *
 * @module
 */
export {
  type CallKnobs,
  type CellKnobs,
  type PointKnobs,
  powerLossCellsTier,
  type PowerLossCellsTierOptions,
  sweepTier,
  type SweepTierOptions,
  type TierLibrary,
  type TierOptions,
} from "./tier.ts";
export { sweep } from "./points/points.ts";
export { programsFor, sweepCalls } from "./calls/calls.ts";
export { parseStateId } from "./core/plan.ts";
export { REFERENCE_TARGET } from "./core/state_child.ts";
export { POWER_LOSS_CELLS } from "./library.ts";
export type {
  CallFailure,
  CallSweepOptions,
  CallSweepReport,
  ClauseTally,
  CrashImage,
  CrashImageResult,
  LegSweep,
  SweepFailure,
  SweepOptions,
  SweepReport,
} from "./core/types.ts";
export { type Outcome, type TierName, type TierOutcome, type TierRun, TIERS } from "../result.ts";
export type { Diagnosis, SkipKind, Status, StoreEngine } from "../../cells/engine/report.ts";
export { DIAGNOSES, type PatternId } from "../../cells/engine/diagnoses.ts";
export type { CellOptions } from "../../cells/engine/options.ts";
export type { Leg, LegName } from "../../harness/legs.ts";
export type { Child, SpawnOptions } from "../../harness/child.ts";
export type { ChildPermissions } from "../../harness/permissions.ts";
export type { ProcessTree, Survivor, TreeMechanism } from "../../harness/process_tree.ts";
export type { Profile } from "../../recorder/crash_states.ts";
export type { PowerLossKill, PowerLossOptions } from "../../cells/power_loss/mod.ts";
export { type ProgramOp, SEQUENCE_OPS, type SequenceOp } from "./core/program.ts";
export type { PlannedState } from "./core/plan.ts";
