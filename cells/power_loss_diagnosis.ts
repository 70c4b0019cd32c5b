/**
 * Known failure patterns of the power-loss tiers, recognised from what a run observed, each
 * with its cause and fix in one line ({@linkcode Diagnosis}). The first: a rollback-journal
 * store that commits with `synchronous=FULL` loses the last acknowledged write to a power
 * loss (the journal's unlink is never made durable, so it comes back hot and rolls the
 * commit back).
 *
 * @example
 * ```ts
 * import { powerLossDiagnoses } from "./power_loss_diagnosis.ts";
 * const [d] = powerLossDiagnoses({ journalMode: "delete", mostLost: 1 });
 * console.log(d?.pattern); // "delete-full-power-loss"
 * ```
 *
 * @module
 */
import type { Diagnosis } from "./cell_report.ts";

/** DELETE mode with `synchronous=FULL`: the last acknowledged write lost to a power loss. */
export const DELETE_FULL_POWER_LOSS: Diagnosis = {
  pattern: "delete-full-power-loss",
  cause:
    "DELETE + synchronous=FULL under power loss loses the last acknowledged write: COMMIT unlinks the rollback journal without syncing its folder, so the journal comes back hot and rolls the commit back",
  fix:
    "PRAGMA synchronous=EXTRA (syncs the folder after the unlink), or journal_mode=WAL with synchronous=FULL",
};

/**
 * What a power-loss run observed that the patterns are recognised from.
 *
 * @example
 * ```ts
 * import type { PowerLossFacts } from "./power_loss_diagnosis.ts";
 * const facts: PowerLossFacts = { journalMode: "wal", mostLost: 40 };
 * ```
 */
export interface PowerLossFacts {
  /** The journal mode the writer ran in (`delete`, `wal`, …, as observed on disk). */
  journalMode: string;
  /** The most acknowledged operations one crash state lost (0: none). */
  mostLost: number;
}

/**
 * The known patterns a power-loss durability failure matches.
 *
 * @param facts What the run observed.
 * @returns The diagnoses, `[]` when none is known.
 * @example
 * ```ts
 * import { powerLossDiagnoses } from "./power_loss_diagnosis.ts";
 * console.log(powerLossDiagnoses({ journalMode: "wal", mostLost: 0 })); // []
 * ```
 */
export function powerLossDiagnoses(facts: PowerLossFacts): Diagnosis[] {
  // A rollback journal brought back hot can take exactly the last commit away.
  const rollback = facts.journalMode.split(", ").every((mode) => mode === "delete");
  if (rollback && facts.mostLost === 1) return [DELETE_FULL_POWER_LOSS];
  return [];
}

/**
 * A diagnosis as the lines a FAIL prints under its check.
 *
 * @param diagnoses The diagnoses.
 * @returns `cause: …` and `fix: …`, one line each.
 * @example
 * ```ts
 * import { DELETE_FULL_POWER_LOSS, diagnosisLines } from "./power_loss_diagnosis.ts";
 * console.log(diagnosisLines([DELETE_FULL_POWER_LOSS]).length); // 2
 * ```
 */
export function diagnosisLines(diagnoses: readonly Diagnosis[]): string[] {
  return diagnoses.flatMap((d) => [`cause (${d.pattern}): ${d.cause}`, `fix: ${d.fix}`]);
}
