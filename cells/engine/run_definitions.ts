// Runs cell definitions outside `deno test` (for the mutant kill matrix): a minimal
// TestContext whose steps run in order and whose first failed step fails the cell.
import { isHarnessError } from "../../harness/harness_error.ts";
import { testContext } from "./_test_context.ts";
import { CellFailure } from "./outcome.ts";
import type { Diagnosis, Status } from "./report.ts";
import { diagnosesOf } from "./diagnoses.ts";

/**
 * The outcome of one definition.
 *
 * @example
 * ```ts
 * import { type DefinitionOutcome, runDefinitions } from "./run_definitions.ts";
 * const outcomes: DefinitionOutcome[] = await runDefinitions([{ name: "passes", fn: () => {} }]);
 * console.log(outcomes); // [{ name: "passes", status: "PASS" }]
 * ```
 */
export interface DefinitionOutcome {
  /** The test name. */
  name: string;
  /** PASS, FAIL, SKIP, or ERROR (only the suite failed: a `HarnessError`, never a verdict). */
  status: Status;
  /** The failure message, or the skip reason. */
  detail?: string;
  /** A FAIL's failed checks, one line each (a cell's; else the message's first line). */
  checks?: string[];
  /** Known failure patterns recognised in a FAIL, with cause and fix. */
  diagnoses?: Diagnosis[];
  /** Where a FAIL's evidence was kept. */
  evidence?: string;
}

// Steps run in order; the first failed step fails the cell, its name leading the message.
function context(name: string): Deno.TestContext {
  return testContext(name, async (stepName, fn) => {
    try {
      await fn(context(stepName));
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      throw new Error(`${stepName}: ${message}`, { cause: error });
    }
    return true;
  });
}

/**
 * Runs test definitions in this process, one after another.
 *
 * @param definitions What a cell returned.
 * @returns One outcome per definition.
 * @example
 * ```ts
 * import { runDefinitions } from "./run_definitions.ts";
 * import { prefixDurabilityCell } from "../prefix_durability/cell.ts";
 * const target = new URL("../reference_target.ts", import.meta.url);
 * for (const outcome of await runDefinitions(await prefixDurabilityCell({ target }))) {
 *   console.log(outcome.status, outcome.name, outcome.detail ?? "");
 * }
 * ```
 */
export async function runDefinitions(
  definitions: Deno.TestDefinition[],
): Promise<DefinitionOutcome[]> {
  const out: DefinitionOutcome[] = [];
  for (const def of definitions) {
    if (def.ignore) {
      const reason = def.name.includes(" SKIP: ") ? def.name.split(" SKIP: ")[1] : "ignored";
      out.push({ name: def.name, status: "SKIP", ...(reason ? { detail: reason } : {}) });
      continue;
    }
    try {
      await def.fn(context(def.name));
      out.push({ name: def.name, status: "PASS" });
    } catch (error) {
      const detail = error instanceof Error ? error.message : String(error);
      const diagnoses = isHarnessError(error)
        ? []
        : error instanceof CellFailure
        ? error.diagnoses
        : diagnosesOf([error]);
      out.push({
        name: def.name,
        status: isHarnessError(error) ? "ERROR" : "FAIL",
        detail,
        checks: error instanceof CellFailure ? error.checks : [detail.split("\n")[0]!],
        ...(diagnoses.length ? { diagnoses } : {}),
        ...(error instanceof CellFailure && error.evidence ? { evidence: error.evidence } : {}),
      });
    }
  }
  return out;
}
