/**
 * The fault tier: every fault clause (injected errors, corruption, lock hazards, files
 * pulled from under a writer, short-lived processes) on each leg × library, as report
 * rows of the `faults` tier. A clause that cannot run here is a SKIP with the reason
 * and the fix; a clause that judged nothing is never a PASS.
 *
 * @example
 * ```ts ignore
 * import { faultTier } from "./fault_tier.ts";
 * const outcome = await faultTier({
 *   target: new URL("../cells/reference_target.ts", import.meta.url).href,
 *   legs: ["default"],
 *   libraries: [{ label: "system", path: "libsqlite3.so.0" }],
 *   quick: true,
 *   evidenceDir: Deno.makeTempDirSync(),
 * });
 * for (const row of outcome.results) console.log(row.clause, row.leg, row.status);
 * ```
 *
 * @module
 */
import type { LegName } from "../harness/legs.ts";
import { buildRecorder } from "../recorder/build.ts";
import { declaredPermissions } from "../cells/contract/target_access.ts";
import { targetSpecifier } from "../cells/contract/target.ts";
import type { Outcome, TierOutcome } from "./result.ts";
import type {
  FaultClause,
  FaultClauseId,
  FaultClauseOptions,
  FaultVerdict,
} from "../cells/faults/types.ts";
import { injectedErrorsClause } from "../cells/faults/injected_errors.ts";
import { corruptionClause } from "../cells/faults/corruption.ts";
import { lockHazardsClause } from "../cells/faults/lock_hazards.ts";
import { pulledFilesClause } from "../cells/faults/pulled_files.ts";
import { shortLivedClause } from "../cells/faults/short_lived.ts";
import { survivorsMessage } from "../harness/process_tree.ts";
import { JudgingStalledError, libraryChild } from "./sweep/tier.ts";
import { findSandboxRefusals, refusalReason } from "../cells/contract/sandbox_refusal.ts";

export type {
  FaultClause,
  FaultClauseId,
  FaultClauseOptions,
  FaultVerdict,
} from "../cells/faults/types.ts";

/**
 * Every fault clause, in report order.
 *
 * @example
 * ```ts
 * import { FAULT_CLAUSES } from "./fault_tier.ts";
 * console.log(FAULT_CLAUSES.map((c) => c.id).join(" ")); // "F1 F2 F3 F4 F5"
 * ```
 */
export const FAULT_CLAUSES: readonly FaultClause[] = [
  injectedErrorsClause,
  corruptionClause,
  lockHazardsClause,
  pulledFilesClause,
  shortLivedClause,
];

/**
 * Options of {@linkcode faultTier}.
 *
 * @example
 * ```ts
 * import type { FaultTierOptions } from "./fault_tier.ts";
 * const options: FaultTierOptions = {
 *   target: "my_target.ts",
 *   legs: ["default", "wal"],
 *   libraries: [{ label: "system", path: "libsqlite3.so.0" }],
 *   quick: true,
 *   evidenceDir: ".cache/evidence",
 *   clauses: ["F1"],
 * };
 * ```
 */
export interface FaultTierOptions {
  /** The target module (a path or URL). */
  target: string;
  /** The journal-mode legs. */
  legs: readonly LegName[];
  /** The SQLite libraries, by label and path. */
  libraries: readonly { label: string; path: string }[];
  /** The slice CI runs: fewer calls and states, the same clauses. */
  quick?: boolean;
  /** Where each clause's folder goes; what a FAIL leaves there is its evidence. */
  evidenceDir: string;
  /** The seed (default 1). */
  seed?: number;
  /** Only these clauses (default every one). */
  clauses?: readonly FaultClauseId[];
}

/** The command that replays one clause on one leg × library. */
function replayOf(o: FaultTierOptions, leg: LegName, library: string): string {
  return [
    "deno task conformance --tiers faults",
    `--target ${o.target}`,
    `--legs ${leg}`,
    `--libraries ${library}`,
    `--seed ${o.seed ?? 1}`,
    ...(o.quick ? ["--quick"] : []),
  ].join(" ");
}

function rowOf(
  clause: FaultClause,
  verdict: FaultVerdict,
  at: { leg: LegName; library: string; seconds: number; replay: string },
): Outcome {
  const { status, reason, skipKind, checks, judged, figures } = verdict;
  return {
    clause: clause.name,
    tier: "faults",
    leg: at.leg,
    library: at.library,
    // Nothing judged is never a PASS.
    status: status === "PASS" && !judged ? "FAIL" : status,
    ...(status === "PASS" && !judged ? { reason: "nothing was judged" } : {}),
    ...(reason !== undefined ? { reason } : {}),
    ...(skipKind ? { skipKind } : {}),
    ...(checks?.length ? { checks } : {}),
    judged,
    ...(figures ? { figures } : {}),
    seconds: at.seconds,
    ...(status === "FAIL" ? { replay: verdict.replay ?? at.replay } : {}),
  };
}

/**
 * F1's second part: the recorded-call sweep's programs (rotations, handoffs, the outbox,
 * every operation the store has) under the same faults, judged by the sweep's oracle in
 * a process of the library's own; merged into F1's verdict on its own program.
 */
async function withSweepPrograms(
  verdict: FaultVerdict,
  options: FaultClauseOptions,
  at: { label: string; evidenceDir: string },
): Promise<FaultVerdict> {
  if (verdict.status === "SKIP" || verdict.status === "ERROR") return verdict;
  let row: Outcome;
  try {
    const result = await libraryChild(
      {
        tier: "faults",
        target: options.target,
        legs: [options.leg.name],
        label: at.label,
        seed: options.seed,
        quick: options.quick,
        evidenceDir: at.evidenceDir,
        replay: "",
      },
      options.leg.library,
      () => {},
    );
    row = result.outcomes[0]!;
    if (result.survivors?.length) {
      return { ...verdict, status: "ERROR", reason: survivorsMessage(result.survivors, "F1") };
    }
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    if (error instanceof JudgingStalledError) {
      // The store's own failure: its programs were judged until it stopped returning.
      const reason = `the sweep's programs under faults: ${why}`;
      return { ...verdict, status: "FAIL", reason, checks: [...verdict.checks ?? [], reason] };
    }
    return { ...verdict, status: "ERROR", reason: `the sweep's programs under faults: ${why}` };
  }
  const checks = [...verdict.checks ?? [], ...row.checks ?? []];
  const status = verdict.status === "FAIL" || row.status === "FAIL"
    ? "FAIL"
    : row.status === "PASS"
    ? verdict.status
    : row.status;
  const reason = verdict.status === "FAIL" ? verdict.reason : row.reason;
  return {
    ...verdict,
    status,
    ...(reason !== undefined ? { reason } : {}),
    ...(checks.length ? { checks } : {}),
    judged: verdict.judged + (row.judged ?? 0),
    figures: { ...verdict.figures, "sweep programs": row.figures ?? {} },
  };
}

/** Runs one clause, turning a crash of the suite into an ERROR row. */
async function runClause(clause: FaultClause, options: FaultClauseOptions): Promise<FaultVerdict> {
  let verdict: FaultVerdict;
  try {
    verdict = await clause.run(options);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    verdict = { status: "ERROR", reason: `the ${clause.id} run failed: ${why}`, judged: 0 };
  }
  // A child the sandbox refused judged nothing, whatever the clause then said.
  const refusals = findSandboxRefusals(options.dir);
  return refusals.length
    ? { status: "ERROR", reason: refusalReason(refusals), judged: 0 }
    : verdict;
}

/**
 * Runs the fault clauses on every leg × library, one after another (each clause already
 * runs its own processes two at a time).
 *
 * @param options The target, legs, libraries and settings.
 * @returns The tier's run and one row per clause × leg × library.
 * @example
 * ```ts ignore
 * import { faultTier } from "./fault_tier.ts";
 * const { results } = await faultTier({
 *   target: "my_target.ts",
 *   legs: ["default"],
 *   libraries: [{ label: "system", path: "libsqlite3.so.0" }],
 *   evidenceDir: ".cache/evidence",
 * });
 * console.log(results.filter((r) => r.status === "FAIL").length);
 * ```
 */
export async function faultTier(options: FaultTierOptions): Promise<TierOutcome> {
  const started = performance.now();
  const target = targetSpecifier(options.target);
  const built = await buildRecorder();
  const recorder = built.ok ? { path: built.path } : { skip: built.reason };
  const permissions = await declaredPermissions(target);
  const clauses = FAULT_CLAUSES.filter((c) => !options.clauses || options.clauses.includes(c.id));
  const results: Outcome[] = [];
  for (const library of options.libraries) {
    for (const leg of options.legs) {
      for (const clause of clauses) {
        // A folder of its own every run: an earlier run's evidence never mixes in.
        Deno.mkdirSync(options.evidenceDir, { recursive: true });
        const dir = Deno.makeTempDirSync({
          dir: options.evidenceDir,
          // A library given by path is labelled by it: no slash in a folder's name.
          prefix: `faults-${clause.id}-${leg}-${library.label.replace(/[^\w.-]+/g, "_")}-`,
        });
        const at = performance.now();
        const clauseOptions: FaultClauseOptions = {
          target,
          leg: { name: leg, library: library.path, sqliteVersion: library.label },
          seed: options.seed ?? 1,
          quick: options.quick ?? false,
          dir,
          recorder,
          ...(permissions ? { permissions } : {}),
        };
        let verdict = await runClause(clause, clauseOptions);
        if (clause.id === "F1") {
          verdict = await withSweepPrograms(verdict, clauseOptions, {
            label: library.label,
            evidenceDir: dir,
          });
        }
        const seconds = (performance.now() - at) / 1000;
        const replay = replayOf(options, leg, library.label);
        results.push(rowOf(clause, verdict, { leg, library: library.label, seconds, replay }));
        if (verdict.status !== "FAIL") Deno.removeSync(dir, { recursive: true });
      }
    }
  }
  const seconds = (performance.now() - started) / 1000;
  return { run: { tier: "faults", status: "RAN", seconds }, results };
}
