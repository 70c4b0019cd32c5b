// The power-loss cell 5 on this process's leg: the reference store keeping either delivery
// policy passes; a store whose next life breaks after a recovery (outbox_stale_sequence),
// one judged under the policy it does not keep, and one acknowledging a delivery before it
// is synced (outbox_delivered_unsynced), are caught on the power-loss states.
import { powerLossOutboxCell } from "./power_loss.ts";
import { registerPowerLossCases } from "../power_loss/_cell_cases.ts";

registerPowerLossCases([{
  cell: 5,
  define: powerLossOutboxCell,
  options: { keepEvidence: false },
  passing: [
    new URL("../testdata/marked_target.ts", import.meta.url),
    // Its races copy the store's folder alone: the inbox and reports stay beside it.
    new URL("../testdata/own_folder_target.ts", import.meta.url),
  ],
  caught: [
    {
      name: "outbox_stale_sequence",
      expect: /new life: its kill landed, its boot exited 0: .*sender: [\s\S]*markAttempting lost/,
    },
    {
      name: "outbox_delivered_unsynced",
      expect:
        /nothing acknowledged lost in any power-loss state \(\w+\): \d+ acknowledged operations: \d+ of \d+ power-loss states[\s\S]*unsynced-ack-power-loss/,
    },
    {
      name: "amo_declared_keeps_marked",
      expect: /copies per obligation \(unmarked, marked\) under at-most-once: .*more than once/,
    },
  ],
}]);
