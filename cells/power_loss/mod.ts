/**
 * The power-loss tier, for any store. A SIGKILL keeps the page cache, so it can never
 * show a commit lost to power loss (SQLite: transactions survive an application crash
 * whatever `synchronous` is). Here the writer child runs under the LD_PRELOAD
 * file-system call recorder (`recorder/`), is SIGKILLed, and every crash state a power
 * loss at each sync point of the run (and at the kill) may leave under a named
 * persistence profile (`posix` or `ext4-ordered`: unsynced writes dropped, any subset,
 * reordered, torn at sectors; names durable per profile) is checked in-process through
 * the target's own store, with the judge of the clause's SIGKILL cell:
 *
 * - durability: every operation acknowledged before a state's instant is in it (and in
 *   what the SIGKILL itself left);
 * - consistency, of every state: it recovers to a valid store (integrity, the store's
 *   invariants, recovery deterministic) holding the cell's clause (a contiguous prefix
 *   for cell 1, whole-or-absent rotations for cell 3, exactly the state of a prefix of
 *   the edit steps for cell 4; for cell 5, after recoverers race on it, each effect at
 *   most once and no obligation silently lost; cell 5 checks the kill's instant only).
 *
 * States that SQLite recovers to identical files share one verdict
 * (`recorder/recovered.ts`). Cell 5's receiver (the inbox file) is outside the power
 * loss: what the provider got stays got. Linux/glibc with `cc` only: elsewhere each cell
 * is a SKIP with the reason, never a pass.
 *
 * One file per clause (`power_loss_prefix_durability.ts`, `…_rotation_atomicity.ts`,
 * `…_fork_determinism.ts`, `…_outbox_exactly_once.ts`), each judging its crash states
 * with the judge of its SIGKILL cell; their shared machinery is `_power_loss.ts`.
 *
 * @example
 * ```ts ignore
 * import { powerLossCells } from "./mod.ts";
 * for (const test of await powerLossCells({ target: new URL("../reference_target.ts", import.meta.url) })) {
 *   Deno.test(test);
 * }
 * ```
 *
 * @module
 */
import type { PowerLossOptions } from "./record.ts";
export { type PowerLossTotals, powerLossTotals } from "./record.ts";
import { powerLossForkCell } from "../fork_determinism/power_loss.ts";
import { powerLossOutboxCell } from "../outbox_exactly_once/power_loss.ts";
import { powerLossPrefixCell } from "../prefix_durability/power_loss.ts";
import { powerLossRotationCell } from "../rotation_atomicity/power_loss.ts";

export type {
  PowerLossKill,
  PowerLossOptions,
  PowerLossRun,
  PowerLossRunOptions,
  StateVerdict,
} from "./record.ts";
export type { CellOptions } from "../engine/options.ts";
export type { Leg, LegName } from "../../harness/legs.ts";
export type { CrashState, FileSet, Profile } from "../../recorder/crash_states.ts";

/**
 * The power-loss tier's cells (1, 3, 4 and 5) for one target on the current leg.
 *
 * @param options Target, leg, thresholds, states.
 * @returns The test definitions.
 * @example
 * ```ts ignore
 * import { powerLossCells } from "./mod.ts";
 * const target = new URL("../reference_target.ts", import.meta.url);
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
