import type { CellOptions } from "./engine/options.ts";
import { prefixDurabilityCell } from "./prefix_durability/cell.ts";
import { consumeOnceCell } from "./consume_once/cell.ts";
import { rotationAtomicityCell } from "./rotation_atomicity/cell.ts";
import { forkDeterminismCell } from "./fork_determinism/cell.ts";
import { outboxExactlyOnceCell } from "./outbox_exactly_once/cell.ts";
import { concurrentWritersCell } from "./concurrent_writers/cell.ts";
import { fencedOwnershipCell } from "./fenced_ownership/cell.ts";
import { resumeResolutionCell } from "./resume_resolution/cell.ts";
import { batchAtomicityCell } from "./batch_atomicity/cell.ts";
import { endsAndReopensCell } from "./ends_and_reopens/cell.ts";
import { leaseRenewalCell } from "./lease_renewal/cell.ts";
import { pendingHandoffsCell } from "./pending_handoffs/cell.ts";
import { checkpointValidityCell } from "./checkpoint_validity/cell.ts";

/**
 * The cells by number.
 *
 * @example
 * ```ts
 * import { CELLS } from "./register.ts";
 * const target = new URL("./reference_target.ts", import.meta.url);
 * for (const test of await CELLS[2]({ target })) Deno.test(test); // cell 2 only
 * ```
 */
export const CELLS = {
  1: prefixDurabilityCell,
  2: consumeOnceCell,
  3: rotationAtomicityCell,
  4: forkDeterminismCell,
  5: outboxExactlyOnceCell,
  6: concurrentWritersCell,
  7: fencedOwnershipCell,
  8: resumeResolutionCell,
  9: batchAtomicityCell,
  10: endsAndReopensCell,
  11: leaseRenewalCell,
  12: pendingHandoffsCell,
  13: checkpointValidityCell,
} as const;

/**
 * A cell number.
 *
 * @example
 * ```ts
 * import { type CellId, registerCells } from "./register.ts";
 * const cells: CellId[] = [1, 3];
 * await registerCells({ target: new URL("./reference_target.ts", import.meta.url), cells });
 * ```
 */
export type CellId = keyof typeof CELLS;

/**
 * Options of {@linkcode conformanceCells}.
 *
 * @example
 * ```ts
 * import { conformanceCells, type RegisterCellsOptions } from "./register.ts";
 * const options: RegisterCellsOptions = {
 *   target: new URL("./reference_target.ts", import.meta.url),
 *   cells: [4, 5],
 *   label: "reference",
 * };
 * console.log((await conformanceCells(options)).map((test) => test.name));
 * ```
 */
export interface RegisterCellsOptions extends CellOptions {
  /** Which cells (default: all). */
  cells?: readonly CellId[];
}

/**
 * Every cell's test definitions for one target on the current leg.
 *
 * @param options Target, leg, and which cells.
 * @returns The definitions, to register with `Deno.test`.
 * @example
 * ```ts
 * import { conformanceCells } from "./register.ts";
 * const target = new URL("./reference_target.ts", import.meta.url);
 * for (const test of await conformanceCells({ target })) Deno.test(test);
 * ```
 */
export async function conformanceCells(
  options: RegisterCellsOptions,
): Promise<Deno.TestDefinition[]> {
  const ids = options.cells ?? (Object.keys(CELLS).map(Number) as CellId[]);
  const out: Deno.TestDefinition[] = [];
  for (const id of ids) out.push(...await CELLS[id](options));
  return out;
}

/**
 * Registers every cell with `Deno.test` for one target on the current leg.
 *
 * @param options Target, leg, and which cells.
 * @example
 * ```ts
 * import { registerCells } from "./register.ts";
 * await registerCells({ target: new URL("./reference_target.ts", import.meta.url) });
 * ```
 */
export async function registerCells(options: RegisterCellsOptions): Promise<void> {
  for (const test of await conformanceCells(options)) Deno.test(test);
}
