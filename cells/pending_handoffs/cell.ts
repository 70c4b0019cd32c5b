import { defineCell } from "../engine/cell.ts";
import type { CellOptions } from "../engine/options.ts";
import { CELL_METHODS } from "../contract/target.ts";

/**
 * Options of {@linkcode pendingHandoffsCell}.
 *
 * @example
 * ```ts
 * import { pendingHandoffsCell, type PendingHandoffsOptions } from "./cell.ts";
 * const options: PendingHandoffsOptions = { target: new URL("../reference_target.ts", import.meta.url) };
 * for (const test of await pendingHandoffsCell(options)) Deno.test(test);
 * ```
 */
export type PendingHandoffsOptions = CellOptions;

/**
 * Cell 12, pending handoffs: not built yet.
 *
 * @param options Target and leg.
 * @returns The test definitions to register with `Deno.test`.
 * @example
 * ```ts
 * import { pendingHandoffsCell } from "./cell.ts";
 * const target = new URL("../reference_target.ts", import.meta.url);
 * for (const test of await pendingHandoffsCell({ target })) Deno.test(test);
 * ```
 */
export function pendingHandoffsCell(
  options: PendingHandoffsOptions,
): Promise<Deno.TestDefinition[]> {
  return defineCell({
    id: 12,
    title: "pending handoffs",
    legs: "all",
    requires: CELL_METHODS[12],
    run: () => Promise.reject(new Error("Cell 12 is not built yet")),
  }, options);
}
