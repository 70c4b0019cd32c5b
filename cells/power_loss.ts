/**
 * The power-loss tier. A SIGKILL keeps the page cache, so it can never show a commit
 * lost to power loss (SQLite: transactions survive an application crash whatever
 * `synchronous` is). Here the writer child runs with the recording VFS
 * (`session_db/recording_vfs.ts`, preloaded as the default VFS), is SIGKILLed, and the
 * crash states a power loss at that instant could have left (`session_db/crash_states.ts`:
 * the last-sync image, the full image, seeded random subsets of unsynced writes, torn
 * writes) are materialised into fresh folders and checked through the target's own store:
 *
 * - durability, of the last-sync image and the full image: every acknowledged operation
 *   is there;
 * - consistency, of every state: it recovers to a valid database (integrity, the store's
 *   invariants, recovery deterministic) holding the cell's clause (a contiguous prefix
 *   for cell 1, whole-or-absent rotations for cell 3, exactly the state of a prefix of
 *   the edit steps for cell 4; for cell 5, after recoverers race on it, each effect at
 *   most once and no obligation silently lost).
 *
 * Cell 5's receiver (the inbox file) is outside the power loss: what the provider got
 * stays got. Its crash-during-resend kill point is not in the tier: the power loss would
 * have to cover the sender's and the armed recoverer's writes in one log.
 *
 * Permissions: the tier's children get an unscoped `--allow-ffi` (callbacks and pointer
 * views need it), the tier's one widening; everything else is scoped as for the other
 * cells. The checking process needs no more than the other cells. The target must reach
 * SQLite through this package's binding (the VFS is registered in that library).
 *
 * One file per clause (`power_loss_prefix_durability.ts`, `…_rotation_atomicity.ts`,
 * `…_fork_determinism.ts`, `…_outbox_exactly_once.ts`), each judging its crash states
 * with the judge of its SIGKILL cell; their shared machinery is `_power_loss.ts`.
 *
 * @example
 * ```ts ignore
 * import { powerLossCells } from "./power_loss.ts";
 * for (const test of await powerLossCells({ target: new URL("./reference_target.ts", import.meta.url) })) {
 *   Deno.test(test);
 * }
 * ```
 *
 * @module
 */
import type { PowerLossOptions } from "./_power_loss.ts";
export { powerLossTotals } from "./_power_loss.ts";
import { powerLossForkCell } from "./power_loss_fork_determinism.ts";
import { powerLossOutboxCell } from "./power_loss_outbox_exactly_once.ts";
import { powerLossPrefixCell } from "./power_loss_prefix_durability.ts";
import { powerLossRotationCell } from "./power_loss_rotation_atomicity.ts";

export type {
  PowerLossKill,
  PowerLossOptions,
  PowerLossRun,
  PowerLossRunOptions,
  StateVerdict,
} from "./_power_loss.ts";
export type { CellOptions } from "./cell_options.ts";
export type { Leg, LegName } from "../harness/legs.ts";
export type { CrashState, FileSet } from "../session_db/crash_states.ts";

/**
 * The power-loss tier's cells (1, 3, 4 and 5) for one target on the current leg.
 *
 * @param options Target, leg, thresholds, states.
 * @returns The test definitions.
 * @example
 * ```ts ignore
 * import { powerLossCells } from "./power_loss.ts";
 * const target = new URL("./reference_target.ts", import.meta.url);
 * for (const test of await powerLossCells({ target })) Deno.test(test);
 * ```
 */
export async function powerLossCells(options: PowerLossOptions): Promise<Deno.TestDefinition[]> {
  return [
    ...await powerLossPrefixCell(options),
    ...await powerLossRotationCell(options),
    ...await powerLossForkCell(options),
    ...await powerLossOutboxCell(options),
  ];
}
