// Cell 9's (batch atomicity) mutants, spread into MUTANTS by catalogue.ts.
import type { MutantSpec, TierMutantSpec } from "./catalogue.ts";

/** The mutants cell 9 must catch. */
export const BATCH_ATOMICITY_MUTANTS: readonly MutantSpec[] = [
  {
    name: "batch_text_as_c_string",
    breaks: "binds a batch's texts as C strings: cut at an embedded NUL",
    cells: [9],
    expect: "caught",
    clause:
      /: every text kept as written .*: \d+ message\(s\) changed, first: w\d+:b\d+\.\d+\/\d+ \(an embedded NUL\) read back as/,
  },
  {
    name: "batch_two_transactions",
    breaks: "commits the first half of a batch and the rest separately",
    cells: [9],
    expect: "caught",
    // Two transactions show as a partial batch after a kill between them, or, when the
    // other writer commits between them first, as its messages inside the batch's ids.
    clause: new RegExp(
      String.raw`: every batch all or nothing: \d+ present: \S+ is partial: \d+ of \d+ messages` +
        String
          .raw`|^(?:two|alternating) writers: batch ids increasing and contiguous in the id order: ` +
        String.raw`\S+ \d+ other message\(s\) between`,
    ),
  },
  {
    name: "batch_ack_before_commit",
    breaks: "acknowledges a batch before its COMMIT",
    cells: [9],
    expect: "caught",
    clause:
      /: every acknowledged batch wholly present: \d+ acknowledged: \d+ acknowledged batch\(es\) lost/,
  },
  {
    name: "batch_noncontiguous_ids",
    breaks: "takes each message's id in a transaction of its own: batches interleave",
    cells: [9],
    expect: "caught",
    // Its blocks of ids interleave batches, or give a batch ids below one another writer had
    // acknowledged before it was invoked (a block reserved earlier): whichever a run shows.
    clause: new RegExp(
      String.raw`^(?:two|alternating) writers: ` +
        String
          .raw`(?:batch ids increasing and contiguous in the id order: \S+ \d+ other message\(s\) between` +
        String
          .raw`|every batch after each id acknowledged before it: \S+ starts at id \d+, not after)`,
    ),
  },
  {
    name: "read_page_5000",
    breaks: "getMessages answers a session's first 5,000 messages alone (a default LIMIT)",
    cells: [9],
    expect: "caught",
    clause:
      /^long session: every one of its \d+ acknowledged messages read back, in order: getMessages\("long"\) answered 5000 of the session's \d+ acknowledged messages: the first 5000,/,
  },
  {
    name: "message_count_stale",
    breaks: "messageCount reads a counter appendMessages does not update",
    cells: [9],
    expect: "caught",
    clause: /: messageCount equals the active rows: \S+ messageCount \d+, \d+ rows/,
  },
  {
    name: "batch_empty_sql_error",
    breaks: "an empty batch throws SQLite's syntax error instead of returning []",
    cells: [9],
    expect: "caught",
    clause:
      /^an empty batch returns \[\] and changes nothing: appendMessages\("w0-s0", \[\]\) threw/,
  },
];

/** The mutants only cell 9's power-loss variant can catch (a SIGKILL keeps the page cache). */
export const BATCH_ATOMICITY_TIER_MUTANTS: readonly TierMutantSpec[] = [
  {
    name: "batch_sync_off",
    breaks: "commits each batch with synchronous=OFF",
    cell: 9,
    tiers: {
      "powerloss-cells":
        /nothing acknowledged lost in any power-loss state \(\w+\): \d+ acknowledged batches/,
    },
  },
];
