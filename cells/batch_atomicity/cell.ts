import { defineCell } from "../engine/cell.ts";
import type { CellOptions } from "../engine/options.ts";
import { CELL_METHODS } from "../contract/target.ts";

/**
 * Options of {@linkcode batchAtomicityCell}.
 *
 * @example
 * ```ts
 * import { batchAtomicityCell, type BatchAtomicityOptions } from "./cell.ts";
 * const options: BatchAtomicityOptions = { target: new URL("../reference_target.ts", import.meta.url) };
 * for (const test of await batchAtomicityCell(options)) Deno.test(test);
 * ```
 */
export type BatchAtomicityOptions = CellOptions;

/**
 * Cell 9, batch atomicity: not built yet.
 *
 * @param options Target and leg.
 * @returns The test definitions to register with `Deno.test`.
 * @example
 * ```ts
 * import { batchAtomicityCell } from "./cell.ts";
 * const target = new URL("../reference_target.ts", import.meta.url);
 * for (const test of await batchAtomicityCell({ target })) Deno.test(test);
 * ```
 */
export function batchAtomicityCell(options: BatchAtomicityOptions): Promise<Deno.TestDefinition[]> {
  return defineCell({
    id: 9,
    title: "batch atomicity",
    legs: "all",
    requires: CELL_METHODS[9],
    run: () => Promise.reject(new Error("Cell 9 is not built yet")),
  }, options);
}
