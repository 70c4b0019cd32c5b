import { defineCell } from "../engine/cell.ts";
import type { CellOptions } from "../engine/options.ts";
import { CELL_METHODS } from "../contract/target.ts";

/**
 * Options of {@linkcode endsAndReopensCell}.
 *
 * @example
 * ```ts
 * import { endsAndReopensCell, type EndsAndReopensOptions } from "./cell.ts";
 * const options: EndsAndReopensOptions = { target: new URL("../reference_target.ts", import.meta.url) };
 * for (const test of await endsAndReopensCell(options)) Deno.test(test);
 * ```
 */
export type EndsAndReopensOptions = CellOptions;

/**
 * Cell 10, ends and reopens: not built yet.
 *
 * @param options Target and leg.
 * @returns The test definitions to register with `Deno.test`.
 * @example
 * ```ts
 * import { endsAndReopensCell } from "./cell.ts";
 * const target = new URL("../reference_target.ts", import.meta.url);
 * for (const test of await endsAndReopensCell({ target })) Deno.test(test);
 * ```
 */
export function endsAndReopensCell(options: EndsAndReopensOptions): Promise<Deno.TestDefinition[]> {
  return defineCell({
    id: 10,
    title: "ends and reopens",
    legs: "all",
    requires: CELL_METHODS[10],
    run: () => Promise.reject(new Error("Cell 10 is not built yet")),
  }, options);
}
