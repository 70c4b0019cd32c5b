/**
 * Runs the power-loss tier's cells (1, 3, 4 and 5, `cells/power_loss.ts`) on the
 * current leg at full size: the default test run keeps small ones of cells 1, 3 and 4;
 * cell 5 (recoverers race on every crash state, twice) runs here only.
 *
 * ```sh
 * deno run -A tools/powerloss_cells.ts [--target <module>] [--cells 1,3,4,5] [--seed N]
 *   [--subsets N] [--torn N]
 * ```
 *
 * Prints one line per cell (PASS / FAIL / SKIP with the first failing step) and exits
 * non-zero unless every cell that ran passed. The leg is the environment's
 * (`SESSION_DB_JOURNAL_MODE`, `DENO_SQLITE_PATH`).
 *
 * @module
 */
import { resolve } from "node:path";
import {
  powerLossForkCell,
  type PowerLossOptions,
  powerLossOutboxCell,
  powerLossPrefixCell,
  powerLossRotationCell,
} from "../cells/power_loss.ts";
import { runDefinitions } from "../cells/run_definitions.ts";

const CELLS: Record<string, (options: PowerLossOptions) => Promise<Deno.TestDefinition[]>> = {
  "1": powerLossPrefixCell,
  "3": powerLossRotationCell,
  "4": powerLossForkCell,
  "5": powerLossOutboxCell,
};

/**
 * Runs the selected power-loss cells on the current leg.
 *
 * @param options The cells' options.
 * @param cells The cell numbers (default 1, 3, 4, 5).
 * @returns Whether every cell that ran passed.
 * @example
 * ```ts ignore
 * import { runPowerLossCells } from "./powerloss_cells.ts";
 * await runPowerLossCells({ target: new URL("../cells/reference_target.ts", import.meta.url) });
 * ```
 */
export async function runPowerLossCells(
  options: PowerLossOptions,
  cells: readonly string[] = Object.keys(CELLS),
): Promise<boolean> {
  let ok = true;
  for (const id of cells) {
    const define = CELLS[id];
    if (!define) throw new Error(`Unknown power-loss cell "${id}": use 1, 3, 4 or 5`);
    const started = performance.now();
    for (const outcome of await runDefinitions(await define(options))) {
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      console.log(
        `cell ${id}: ${outcome.status} in ${seconds} s: ${outcome.name}${
          outcome.detail ? `\n  ${outcome.detail.split("\n")[0]}` : ""
        }`,
      );
      if (outcome.status === "FAIL") ok = false;
    }
  }
  return ok;
}

if (import.meta.main) {
  const options: PowerLossOptions = {
    target: new URL("../cells/reference_target.ts", import.meta.url),
  };
  let cells: string[] | undefined;
  for (let i = 0; i < Deno.args.length; i++) {
    const flag = Deno.args[i]!;
    const value = Deno.args[++i];
    if (value === undefined) {
      console.error(`Invalid arguments: ${flag} needs a value`);
      Deno.exit(2);
    }
    if (flag === "--target") {
      options.target = /^[a-z]+:/.test(value) ? value : new URL(`file://${resolve(value)}`);
    } else if (flag === "--cells") cells = value.split(",");
    else if (flag === "--seed") options.seed = Number(value);
    else if (flag === "--subsets") options.subsets = Number(value);
    else if (flag === "--torn") options.torn = Number(value);
    else {
      console.error(
        `Invalid argument "${flag}": use --target, --cells, --seed, --subsets or --torn`,
      );
      Deno.exit(2);
    }
  }
  Deno.exit(await runPowerLossCells(options, cells) ? 0 : 1);
}
