import { defineCell } from "../engine/cell.ts";
import type { CellOptions } from "../engine/options.ts";
import { CELL_METHODS } from "../contract/target.ts";

/**
 * Options of {@linkcode resumeResolutionCell}.
 *
 * @example
 * ```ts
 * import { resumeResolutionCell, type ResumeResolutionOptions } from "./cell.ts";
 * const options: ResumeResolutionOptions = { target: new URL("../reference_target.ts", import.meta.url) };
 * for (const test of await resumeResolutionCell(options)) Deno.test(test);
 * ```
 */
export type ResumeResolutionOptions = CellOptions;

/**
 * Cell 8, resume resolution: not built yet.
 *
 * @param options Target and leg.
 * @returns The test definitions to register with `Deno.test`.
 * @example
 * ```ts
 * import { resumeResolutionCell } from "./cell.ts";
 * const target = new URL("../reference_target.ts", import.meta.url);
 * for (const test of await resumeResolutionCell({ target })) Deno.test(test);
 * ```
 */
export function resumeResolutionCell(
  options: ResumeResolutionOptions,
): Promise<Deno.TestDefinition[]> {
  return defineCell({
    id: 8,
    title: "resume resolution",
    legs: "all",
    requires: CELL_METHODS[8],
    run: () => Promise.reject(new Error("Cell 8 is not built yet")),
  }, options);
}
