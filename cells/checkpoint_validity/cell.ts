import { defineCell } from "../engine/cell.ts";
import type { CellOptions } from "../engine/options.ts";
import { CELL_METHODS } from "../contract/target.ts";

/**
 * Options of {@linkcode checkpointValidityCell}.
 *
 * @example
 * ```ts
 * import { checkpointValidityCell, type CheckpointValidityOptions } from "./cell.ts";
 * const options: CheckpointValidityOptions = { target: new URL("../reference_target.ts", import.meta.url) };
 * for (const test of await checkpointValidityCell(options)) Deno.test(test);
 * ```
 */
export type CheckpointValidityOptions = CellOptions;

/**
 * Cell 13, checkpoint validity: not built yet.
 *
 * @param options Target and leg.
 * @returns The test definitions to register with `Deno.test`.
 * @example
 * ```ts
 * import { checkpointValidityCell } from "./cell.ts";
 * const target = new URL("../reference_target.ts", import.meta.url);
 * for (const test of await checkpointValidityCell({ target })) Deno.test(test);
 * ```
 */
export function checkpointValidityCell(
  options: CheckpointValidityOptions,
): Promise<Deno.TestDefinition[]> {
  return defineCell({
    id: 13,
    title: "checkpoint validity",
    legs: "all",
    requires: CELL_METHODS[13],
    run: () => Promise.reject(new Error("Cell 13 is not built yet")),
  }, options);
}
