/**
 * The engine under the tasks: typed results for other projects. Run the cells on legs ×
 * libraries ({@linkcode runCells}) or every tier that can judge a store
 * ({@linkcode runConformance}), and read back {@linkcode Outcome}s and a
 * {@linkcode ConformanceReport} (level, verdict, capabilities) instead of a console.
 *
 * @example
 * ```ts ignore
 * import { runConformance } from "./mod.ts";
 * const report = await runConformance({
 *   target: new URL("../cells/reference_target.ts", import.meta.url).href,
 *   quick: true,
 *   machine: { id: "ci", os: Deno.build.os, arch: Deno.build.arch, deno: Deno.version.deno },
 *   command: "runConformance",
 * });
 * console.log(report.verdict, report.level);
 * ```
 *
 * @module
 */
export type { Outcome, TierName, TierOutcome, TierRun } from "./result.ts";
export { TIERS } from "./result.ts";
export type { Diagnosis, SkipKind, Status, StoreEngine } from "../cells/engine/report.ts";
export type { Leg, LegName } from "../harness/legs.ts";
export type { ChildPermissions } from "../harness/permissions.ts";
export { type CellsOptions, type LegRun, runCells } from "./cells.ts";
export {
  type ConformanceEvent,
  type ConformanceOptions,
  ConformanceSetupError,
  runConformance,
} from "./conformance.ts";
export type {
  Capabilities,
  ConformanceReport,
  Expectation,
  Level,
  Machine,
  Result,
  ResultStatus,
  Verdict,
} from "./report_schema.ts";
export {
  LEVELS,
  observedResults,
  REPORT_SCHEMA,
  REPORT_SCHEMA_VERSION,
  verdictOf,
} from "./report_schema.ts";
export { levelOf, type LevelVerdict } from "./levels.ts";
export { type Manifest, type ManifestEntry, readManifest } from "./manifest.ts";
export { junitReport, markdownReport } from "./report_formats.ts";
export {
  type Library,
  libraryAxis,
  type LibraryChoice,
  resolveLibraries,
  type ResolveOptions,
} from "./libraries.ts";
export {
  FAULT_CLAUSES,
  type FaultClause,
  type FaultClauseId,
  type FaultClauseOptions,
  faultTier,
  type FaultTierOptions,
  type FaultVerdict,
} from "./fault_tier.ts";
