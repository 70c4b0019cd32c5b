// Cell 11's (lease renewal) mutants, spread into MUTANTS by catalogue.ts.
import type { MutantSpec, TierMutantSpec } from "./catalogue.ts";

/** The mutants cell 11 must catch. */
export const LEASE_RENEWAL_MUTANTS: readonly MutantSpec[] = [
  {
    name: "refresh_ignores_holder",
    breaks: "renews the session's live lock whoever holds it",
    cells: [11],
    expect: "caught",
    clause: /^taken: the stale refreshCompressionLock is refused: the stale renewal was accepted/,
  },
  {
    name: "refresh_revives_lapsed",
    breaks: "renews a lapsed lease by writing its holder back, even after a takeover",
    cells: [11],
    expect: "caught",
    clause: /^expired: the stale refreshCompressionLock is refused: the stale renewal was accepted/,
  },
  {
    name: "refresh_extends_any_lease",
    breaks: "renews the live lock whoever holds it, answering whether the caller holds it",
    cells: [11],
    expect: "caught",
    clause:
      /^lapsing: the renewal changed nothing: a third holder could not take the lock over past the new holder's own expiry/,
  },
  {
    name: "refresh_select_then_update",
    breaks: "renews by reading the holder, then updating without the holder predicate",
    cells: [11],
    expect: "caught",
    clause:
      /^refreshCompressionLock stopped at lock call \d+: .*the stale renewal was accepted: returned true/,
    // Only the stop series can catch it: the task runs planted mutants without it otherwise.
    cellOptions: { raceSeries: "locks" },
  },
  {
    name: "refresh_ack_before_commit",
    breaks: "acknowledges a renewal before its COMMIT",
    cells: [11],
    expect: "caught",
    clause:
      /^an acknowledged renewal survives a SIGKILL right after it: another holder took over the renewed lock/,
  },
];

/** The mutants only cell 11's power-loss variant can catch (a SIGKILL keeps the page cache). */
export const LEASE_RENEWAL_TIER_MUTANTS: readonly TierMutantSpec[] = [
  {
    name: "refresh_sync_off",
    breaks: "commits each renewal with synchronous=OFF",
    cell: 11,
    tiers: {
      "powerloss-cells":
        /nothing acknowledged lost in any power-loss state \(\w+\): \d+ acknowledged renewals/,
    },
  },
];
