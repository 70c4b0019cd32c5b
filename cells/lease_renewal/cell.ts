import { defineCell } from "../engine/cell.ts";
import type { CellOptions } from "../engine/options.ts";
import { CELL_METHODS } from "../contract/target.ts";

/**
 * Options of {@linkcode leaseRenewalCell}.
 *
 * @example
 * ```ts
 * import { leaseRenewalCell, type LeaseRenewalOptions } from "./cell.ts";
 * const options: LeaseRenewalOptions = { target: new URL("../reference_target.ts", import.meta.url) };
 * for (const test of await leaseRenewalCell(options)) Deno.test(test);
 * ```
 */
export type LeaseRenewalOptions = CellOptions;

/**
 * Cell 11, lease renewal: not built yet.
 *
 * @param options Target and leg.
 * @returns The test definitions to register with `Deno.test`.
 * @example
 * ```ts
 * import { leaseRenewalCell } from "./cell.ts";
 * const target = new URL("../reference_target.ts", import.meta.url);
 * for (const test of await leaseRenewalCell({ target })) Deno.test(test);
 * ```
 */
export function leaseRenewalCell(options: LeaseRenewalOptions): Promise<Deno.TestDefinition[]> {
  return defineCell({
    id: 11,
    title: "lease renewal",
    legs: "all",
    requires: CELL_METHODS[11],
    run: () => Promise.reject(new Error("Cell 11 is not built yet")),
  }, options);
}
