// Cell 8's (resume resolution) mutants, spread into MUTANTS by catalogue.ts.
import type { MutantSpec, TierMutantSpec } from "./catalogue.ts";

/** The mutants cell 8 must catch. */
export const RESUME_RESOLUTION_MUTANTS: readonly MutantSpec[] = [
  {
    name: "resolve_returns_parent",
    breaks: "resolves a session to itself, ignoring its rotations",
    cells: [8],
    expect: "caught",
    clause:
      /^random kill: resolveResumeSessionId gives each chain's live tip \([^)]*\): this process: resolveResumeSessionId\(c0-0\) = c0-0 \(ended: compression\)/,
  },
  {
    name: "resolve_unpublished_child",
    breaks: "resolves to a child it planned before its rotation committed",
    cells: [8],
    expect: "caught",
    // At a crash point inside the second publish (or a random kill in the same gap).
    clause:
      /: resolveResumeSessionId gives each chain's live tip \([^)]*\): this process: resolveResumeSessionId\(c\d+-0\) = c\d+-\d \(no such session\)/,
  },
  {
    name: "find_live_child_ended",
    breaks: "names a continuation that was rotated on (ended) as the live one",
    cells: [8],
    expect: "caught",
    clause:
      /^random kill: findLiveCompressionChild names the live continuation exactly when there is one: this process: findLiveCompressionChild\(c0-0\) = c0-1 \(ended: compression\), expected undefined/,
  },
  {
    name: "reopen_orphan_with_child",
    breaks: "reopens a parent ended by compression that has a published child",
    cells: [8],
    expect: "caught",
    clause:
      /^random kill: reopenOrphanedCompressionSession reopens every orphan, .*: reopenOrphanedCompressionSession\(c0-0\) returned true for a parent with a published continuation/,
  },
  {
    name: "orphan_lock_live_holder",
    breaks: "reopens an orphan while its lock holder is alive",
    cells: [8],
    expect: "caught",
    clause:
      /^live holder: reopenOrphanedCompressionSession refuses an orphan whose lock holder lives: it returned true while the holder \(pid \d+\) was alive/,
  },
  {
    name: "rotation_two_transactions_stranded",
    breaks: "publishes in two transactions and has no orphan recovery",
    cells: [8],
    expect: "caught",
    // The kill series always lands in the gap; a random kill sometimes gets there first.
    clause:
      /^(?:publishCompressionChild #2 killed before \w+ call \d+|random kill): every chain has exactly one live tip.*: the tip c\d+-\d is ended \(compression\) with no published continuation: the chain is stranded/,
  },
];

/** The mutants only cell 8's power-loss variant can catch (a SIGKILL keeps the page cache). */
export const RESUME_RESOLUTION_TIER_MUTANTS: readonly TierMutantSpec[] = [
  {
    name: "rotation_sync_off",
    breaks: "commits each rotation and its lock release with synchronous=OFF",
    cell: 8,
    // The loss shows between a rotation's acknowledgement and the next append's sync.
    instants: 60,
    tiers: {
      "powerloss-cells":
        /nothing acknowledged lost in any power-loss state \(\w+\): \d+ acknowledged appends and rotations/,
    },
  },
];
