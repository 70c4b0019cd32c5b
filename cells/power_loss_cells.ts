// The power-loss cells at once, beside the registration of the SIGKILL cells: the
// shared machinery in power_loss/ never imports a clause.
import type { PowerLossOptions } from "./power_loss/record.ts";
import { powerLossBatchCell } from "./batch_atomicity/power_loss.ts";
import { powerLossEndsCell } from "./ends_and_reopens/power_loss.ts";
import { powerLossForkCell } from "./fork_determinism/power_loss.ts";
import { powerLossHandoffCell } from "./pending_handoffs/power_loss.ts";
import { powerLossRenewalCell } from "./lease_renewal/power_loss.ts";
import { powerLossOutboxCell } from "./outbox_exactly_once/power_loss.ts";
import { powerLossPrefixCell } from "./prefix_durability/power_loss.ts";
import { powerLossRotationCell } from "./rotation_atomicity/power_loss.ts";
import { powerLossResolutionCell } from "./resume_resolution/power_loss.ts";

/**
 * The power-loss tier's cells (1, 3, 4, 5, 8, 9, 10, 11 and 12) for one target on the current leg.
 *
 * @param options Target, leg, thresholds, states.
 * @returns The test definitions.
 * @example
 * ```ts ignore
 * import { powerLossCells } from "./power_loss_cells.ts";
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
    ...await powerLossResolutionCell(options),
    ...await powerLossBatchCell(options),
    ...await powerLossEndsCell(options),
    ...await powerLossRenewalCell(options),
    ...await powerLossHandoffCell(options),
  ];
}
