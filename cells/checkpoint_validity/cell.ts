import { defineCell } from "../engine/cell.ts";
import type { CellOptions } from "../engine/options.ts";
import { startTallies } from "../engine/tally.ts";
import { refusedWrites } from "./writes.ts";
import { foundOnDisk } from "./on_disk.ts";
import { refusalSeries } from "./series.ts";
import { seriesKind } from "../moves/kill_series.ts";

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
 * Cell 13, checkpoint validity: a store refuses, with a typed error and no change, a state
 * that breaks its own schema rules, both when asked to write one and when it finds one on
 * disk. Writes: in a child, an append to a missing session and (with `forkSession`) forks
 * past the parent's end, at another session's message and of a missing parent are each
 * refused typed, create nothing and change nothing, judged from a fresh process, also
 * when the child is SIGKILLed right after the refusal; the recovered store then takes
 * appends that survive another kill. On disk: each violation the target's
 * `plantViolation` writes into a valid, closed store is refused by a fresh process (a
 * typed open error, a `checkInvariants` report, or typed errors from every read of the
 * affected session), and each write to that session is refused typed or comes after the
 * report. Every state: integrity, two opens read the same. Every leg.
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
    // The kill series inside each refusal loads the recorder (LD_PRELOAD).
    preloads: true,
    run: async (ctx, t) => {
      startTallies(ctx);
      const { fork } = await refusedWrites(ctx, t);
      await refusalSeries({ ctx, t }, { kind: seriesKind(options.killSeries), fork });
      await foundOnDisk(ctx, t);
    },
  }, options);
}
