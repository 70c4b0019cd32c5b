// The power-loss variants of cells 8 to 10 on this process's leg: the reference store passes
// each; each cell's planted mutants are caught for their reason. The `_sync_off` mutants
// commit the cell's writes with synchronous=OFF: GREEN under SIGKILL (the page cache
// survives), they lose acknowledged work in the power-loss states.
import { powerLossResolutionCell } from "../resume_resolution/power_loss.ts";
import { powerLossBatchCell } from "../batch_atomicity/power_loss.ts";
import { powerLossEndsCell } from "../ends_and_reopens/power_loss.ts";
import { RESUME_RESOLUTION_TIER_MUTANTS } from "../testdata/mutants/catalogue_resume_resolution.ts";
import { BATCH_ATOMICITY_TIER_MUTANTS } from "../testdata/mutants/catalogue_batch_atomicity.ts";
import { ENDS_AND_REOPENS_TIER_MUTANTS } from "../testdata/mutants/catalogue_ends_and_reopens.ts";
import { registerPowerLossCases, tierCaught } from "./_cell_cases.ts";

/** Small runs: the last 12 sync points, 6 random states each. */
const small = (minAcknowledged: number) => ({
  minAcknowledged,
  subsets: 6,
  instants: 12,
  keepEvidence: false,
});

registerPowerLossCases([
  {
    cell: 8,
    define: powerLossResolutionCell,
    options: small(7),
    // A lost rotation shows only between its acknowledgement and the next append's sync:
    // every sync point of the mutant's runs is judged.
    caught: tierCaught(RESUME_RESOLUTION_TIER_MUTANTS, {
      minAcknowledged: 7,
      subsets: 4,
      keepEvidence: false,
    }),
  },
  {
    cell: 9,
    define: powerLossBatchCell,
    options: small(8),
    caught: tierCaught(BATCH_ATOMICITY_TIER_MUTANTS),
  },
  {
    cell: 10,
    define: powerLossEndsCell,
    options: small(4),
    caught: tierCaught(ENDS_AND_REOPENS_TIER_MUTANTS),
  },
]);
