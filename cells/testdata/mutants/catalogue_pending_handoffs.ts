// Cell 12's (pending handoffs) mutants, spread into MUTANTS by catalogue.ts.
import type { MutantSpec, TierMutantSpec } from "./catalogue.ts";

/** The mutants cell 12 must catch. */
export const PENDING_HANDOFFS_MUTANTS: readonly MutantSpec[] = [
  {
    name: "pending_list_includes_running",
    breaks: "lists running (claimed) handoffs as pending",
    cells: [12],
    expect: "caught",
    clause:
      /^setup: listPendingHandoffs lists every pending handoff once, and nothing else: .*h\d\d is listed, and it is running/,
  },
  {
    name: "pending_list_duplicates",
    breaks: "lists a pending session once per message (a join)",
    cells: [12],
    expect: "caught",
    clause:
      /^setup: listPendingHandoffs lists every pending handoff once, and nothing else: .*h\d\d is listed [2-9] times/,
  },
  {
    name: "pending_list_drops_rerequested",
    breaks: "omits a handoff re-requested after its claim failed or completed",
    cells: [12],
    expect: "caught",
    clause:
      /^setup: listPendingHandoffs lists every pending handoff once, and nothing else: .*h\d\d is pending and not listed/,
  },
  {
    name: "pending_list_page_100",
    breaks: "lists the first 100 pending handoffs alone (a default LIMIT)",
    cells: [12],
    expect: "caught",
    clause:
      /^many pending: listPendingHandoffs lists every pending handoff once, and nothing else: p\d{3} is pending and not listed/,
  },
  {
    name: "pending_index_second_transaction",
    breaks: "lists from a side index updated in a second transaction after each request and claim",
    cells: [12],
    expect: "caught",
    // No random rounds: the kill series alone must find the gap between the two transactions.
    clause:
      /^requestHandoff #4 killed before sync call \d+ \(re-request after a failure\): listPendingHandoffs lists every pending handoff once, and nothing else: A is pending and not listed/,
    cellOptions: { rounds: 0 },
  },
];

/** The mutants only cell 12's power-loss variant can catch (a SIGKILL keeps the page cache). */
export const PENDING_HANDOFFS_TIER_MUTANTS: readonly TierMutantSpec[] = [
  {
    name: "handoff_sync_off",
    breaks: "commits each handoff request and claim with synchronous=OFF",
    cell: 12,
    tiers: {
      "powerloss-cells":
        /nothing acknowledged lost in any power-loss state \(\w+\): \d+ acknowledged handoff operations/,
    },
  },
];
