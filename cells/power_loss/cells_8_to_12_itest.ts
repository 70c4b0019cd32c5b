// The power-loss variants of cells 8 to 12 on this process's leg: the reference store passes
// each; each cell's planted mutants are caught for their reason. The `_sync_off` mutants
// commit the cell's writes with synchronous=OFF: GREEN under SIGKILL (the page cache
// survives), they lose acknowledged work in the power-loss states. (Cell 13 has no variant:
// its README says why.)
import { powerLossResolutionCell } from "../resume_resolution/power_loss.ts";
import { powerLossBatchCell } from "../batch_atomicity/power_loss.ts";
import { powerLossEndsCell } from "../ends_and_reopens/power_loss.ts";
import { powerLossRenewalCell } from "../lease_renewal/power_loss.ts";
import { powerLossHandoffCell } from "../pending_handoffs/power_loss.ts";
import { RESUME_RESOLUTION_TIER_MUTANTS } from "../testdata/mutants/catalogue_resume_resolution.ts";
import { BATCH_ATOMICITY_TIER_MUTANTS } from "../testdata/mutants/catalogue_batch_atomicity.ts";
import { ENDS_AND_REOPENS_TIER_MUTANTS } from "../testdata/mutants/catalogue_ends_and_reopens.ts";
import { LEASE_RENEWAL_TIER_MUTANTS } from "../testdata/mutants/catalogue_lease_renewal.ts";
import { PENDING_HANDOFFS_TIER_MUTANTS } from "../testdata/mutants/catalogue_pending_handoffs.ts";
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
  {
    cell: 11,
    define: powerLossRenewalCell,
    options: small(6),
    // Expiries in whole seconds: its stale holders' leases lapse on the second after them.
    passing: [new URL("../testdata/whole_second_leases_target.ts", import.meta.url)],
    caught: [
      ...tierCaught(LEASE_RENEWAL_TIER_MUTANTS),
      {
        // Acknowledged before its COMMIT: lost even where the SIGKILL itself left the files.
        name: "refresh_ack_before_commit",
        expect:
          /nothing acknowledged lost in any power-loss state \(\w+\): \d+ acknowledged renewals/,
      },
      {
        // The stale renewal answered true, or (its answer not yet journaled) its lock revived.
        name: "refresh_revives_lapsed",
        expect:
          /every crash state recovers consistent: [\s\S]*(?:x\d+: the stale renewal was accepted: returned true|lapsed lock of x\d+: the stale renewal revived it)/,
      },
    ],
  },
  {
    cell: 12,
    define: powerLossHandoffCell,
    options: small(8),
    caught: [
      ...tierCaught(PENDING_HANDOFFS_TIER_MUTANTS),
      {
        // A request, claim or failure committed and its index entry not yet, at a sync point
        // between the two transactions: pending and unlisted, or running or failed and listed.
        name: "pending_index_second_transaction",
        expect:
          /every crash state recovers consistent: [\s\S]*h\d\d is (?:pending and not listed|listed, and it is (?:running|failed))/,
      },
    ],
  },
]);
