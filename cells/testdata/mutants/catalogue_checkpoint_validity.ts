// Cell 13's (checkpoint validity) mutants, spread into MUTANTS by catalogue.ts.
import type { MutantSpec } from "./catalogue.ts";

/** The mutants cell 13 must catch. */
export const CHECKPOINT_VALIDITY_MUTANTS: readonly MutantSpec[] = [
  {
    name: "append_creates_missing_session",
    breaks: "an append to a missing session creates the session",
    cells: [13],
    expect: "caught",
    clause:
      /^appendMessage to the missing session ghost: refused with a typed error: it was accepted: returned \d+/,
  },
  {
    name: "append_missing_untyped",
    breaks: "an append to a missing session throws a plain Error, not a typed one",
    cells: [13],
    expect: "caught",
    clause:
      /^appendMessage to the missing session ghost: refused with a typed error: the refusal is not typed: threw Error/,
  },
  {
    name: "append_missing_undone_later",
    breaks: "an append to a missing session creates it, then deletes it in a second transaction",
    cells: [13],
    expect: "caught",
    clause:
      /^appendMessage to the missing session ghost #\d+ killed before \w+ call \d+: nothing created, nothing changed: .*session ghost/,
  },
  {
    name: "fork_past_end_accepted",
    breaks: "a fork past the parent's end copies what exists and returns",
    cells: [13],
    expect: "caught",
    clause: /^forkSession of s past its end: refused with a typed error: it was accepted/,
  },
  {
    name: "invariants_blind",
    breaks: "checkInvariants always empty, reads serve a state planted on disk",
    cells: [13],
    expect: "caught",
    clause:
      /^orphan-message: refused when found on disk \(.*\): ghost served as if whole \(checkInvariants returned \[\]\)/,
  },
];
