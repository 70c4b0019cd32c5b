// Cell 10's (ends and reopens) mutants, spread into MUTANTS by catalogue.ts.
import type { MutantSpec, TierMutantSpec } from "./catalogue.ts";

/** The mutants cell 10 must catch. */
export const ENDS_AND_REOPENS_MUTANTS: readonly MutantSpec[] = [
  {
    name: "end_ack_before_commit",
    breaks: "acknowledges an end before its COMMIT",
    cells: [10],
    expect: "caught",
    clause: /: an acknowledged end or reopen survives: expected ended: the session is open/,
  },
  {
    name: "append_to_ended_accepted",
    breaks: "takes appends to a session ended by endSession",
    cells: [10],
    expect: "caught",
    clause:
      /: the store's answers: an append to the ended session returned \d+, not SessionEndedError/,
  },
  {
    name: "reopen_keeps_refusing",
    breaks: "reopens a session that still refuses appends",
    cells: [10],
    expect: "caught",
    clause:
      /: the store's answers: an append to the open \(reopened\) session threw SessionEndedError/,
  },
  {
    name: "ensure_check_then_insert",
    breaks: "ensures a session by a read, then an INSERT in separate transactions",
    cells: [10],
    expect: "caught",
    // The plain race catches it when racers interleave; the ensure series always does.
    cellOptions: { raceSeries: "locks" },
    clause:
      /^(?:round \d: every racer returned without error|ensureSession: every racer stopped at lock call \d+, then continued): [1-9]\d* racer\(s\) failed/,
  },
];

/** The mutants only cell 10's power-loss variant can catch (a SIGKILL keeps the page cache). */
export const ENDS_AND_REOPENS_TIER_MUTANTS: readonly TierMutantSpec[] = [
  {
    name: "end_sync_off",
    breaks: "commits each end and reopen with synchronous=OFF",
    cell: 10,
    tiers: {
      "powerloss-cells":
        /nothing acknowledged lost in any power-loss state \(\w+\): \d+ acknowledged calls \(ends, reopens, appends\)/,
    },
  },
];
