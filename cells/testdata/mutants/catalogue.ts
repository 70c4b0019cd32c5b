/**
 * The mutants: each breaks exactly one clause, names the cell meant to catch it and the
 * check that must be the one failing (a mutant caught for another reason, say it did
 * not open, proves nothing). Shared by `cells/mutants_itest.ts` and `deno task mutants`.
 *
 * @module
 */
import type { LegName } from "../../../harness/legs.ts";
import type { CellNumber } from "../../contract/target.ts";
import {
  RESUME_RESOLUTION_MUTANTS,
  RESUME_RESOLUTION_TIER_MUTANTS,
} from "./catalogue_resume_resolution.ts";
import {
  BATCH_ATOMICITY_MUTANTS,
  BATCH_ATOMICITY_TIER_MUTANTS,
} from "./catalogue_batch_atomicity.ts";
import {
  ENDS_AND_REOPENS_MUTANTS,
  ENDS_AND_REOPENS_TIER_MUTANTS,
} from "./catalogue_ends_and_reopens.ts";
import { LEASE_RENEWAL_MUTANTS, LEASE_RENEWAL_TIER_MUTANTS } from "./catalogue_lease_renewal.ts";
import {
  PENDING_HANDOFFS_MUTANTS,
  PENDING_HANDOFFS_TIER_MUTANTS,
} from "./catalogue_pending_handoffs.ts";
import { CHECKPOINT_VALIDITY_MUTANTS } from "./catalogue_checkpoint_validity.ts";

/** A cell number. */
export type MutantCell = CellNumber;

/** One mutant. */
export interface MutantSpec {
  /** The module's file name in this folder, without `.ts`. */
  name: string;
  /** The clause it breaks, in a few words. */
  breaks: string;
  /** The cells meant to catch it. */
  cells: readonly MutantCell[];
  /**
   * `caught`: each of `cells` must FAIL with `clause` matching the failing step.
   * `skipped`: each of `cells` must SKIP with `clause` matching the reason (on `leg`).
   */
  expect: "caught" | "skipped";
  /** What the failing step or the skip reason must match. */
  clause: RegExp;
  /** The leg it is judged on (default: whichever leg is running). */
  leg?: LegName;
  /**
   * Options for the cells beyond the target (e.g. cell 7's `owners`), so that the run
   * probes the clause the mutant breaks and nothing the reference store itself fails.
   */
  cellOptions?: Readonly<Record<string, unknown>>;
}

/** How a store that loses acknowledged appends is judged: cell 1's durability check fails. */
const LOSES_APPENDS = {
  cells: [1],
  expect: "caught",
  clause: /^nothing acknowledged lost: \d+ acknowledged: \d+ acknowledged append\(s\) lost/,
} as const satisfies Omit<MutantSpec, "name" | "breaks">;

/** How a store that runs in WAL on the delete leg is judged: every cell SKIPs that leg. */
const IN_WAL_ON_DELETE = {
  cells: [1, 3, 4, 5],
  expect: "skipped",
  clause: /^leg delete not honoured: .*probe \(killed while open\): wal/,
  leg: "delete",
} as const satisfies Omit<MutantSpec, "name" | "breaks">;

/**
 * A cell 7 mutant whose stale owner's act is accepted: caught by the step that expects it
 * refused, for that owner alone (`orders`: the scenarios' pattern, e.g. `(?:expired|before)`).
 */
function staleActAccepted(
  name: string,
  mutant: { breaks: string; owner: string; orders: string; act: string },
): MutantSpec {
  const { breaks, owner, orders, act } = mutant;
  return {
    name,
    breaks,
    cells: [7],
    expect: "caught",
    clause: new RegExp(
      `^${owner} · ${orders}: the stale ${act} is refused with a typed error: .* was accepted`,
    ),
    cellOptions: { owners: [owner] },
  };
}

/** Every mutant under `cells/testdata/mutants/`. */
export const MUTANTS: readonly MutantSpec[] = [
  {
    name: "ack_before_commit",
    breaks: "acknowledges an append before its COMMIT",
    ...LOSES_APPENDS,
  },
  {
    name: "worker_ack_before_commit",
    breaks: "a worker process acknowledges a write before its COMMIT",
    ...LOSES_APPENDS,
  },
  {
    name: "daemon_writes_after_kill",
    breaks: "a daemon in its own session writes acknowledged appends after its parent died",
    ...LOSES_APPENDS,
  },
  {
    name: "batch_commit_50",
    breaks: "commits appends in batches of 50",
    ...LOSES_APPENDS,
  },
  {
    name: "recovery_wrong_order",
    breaks: "recovery reads without ORDER BY id (here by content)",
    cells: [1],
    expect: "caught",
    clause: /^contiguous prefix m0\.\.m\d+, N >= acknowledged: row \d+ is .*reorder\)/,
  },
  {
    name: "append_text_as_c_string",
    breaks: "binds a message's text as a C string: cut at an embedded NUL",
    cells: [1],
    expect: "caught",
    clause:
      /^every text kept as written .*: \d+ message\(s\) changed, first: m\d+ \(an embedded NUL\) read back as/,
  },
  {
    name: "append_text_cut_at_64k",
    breaks: "keeps at most 65,535 bytes of a message's text",
    cells: [1],
    expect: "caught",
    clause:
      /^every text kept as written .*: \d+ message\(s\) changed, first: m\d+ \(72 KiB\) read back as 65535 characters/,
  },
  {
    name: "append_identical_merged",
    breaks: "takes an append identical to a message of the session for a retry of it",
    cells: [1],
    expect: "caught",
    clause:
      /^two identical writes are two messages, .*: the second of two identical writes was answered the first's id/,
  },
  {
    name: "record_identical_merged",
    breaks:
      "takes an obligation of the same content for another message for a retry of one recorded",
    cells: [5],
    expect: "caught",
    clause:
      /^two identical writes are two obligations, .*: the second of two identical writes was answered the first's id/,
  },
  {
    name: "roles_not_kept",
    breaks: "keeps no role: every message reads back as the user's",
    cells: [1, 3, 4, 9],
    expect: "caught",
    clause:
      /(?:^|: )every (?:role kept as written|acknowledged handoff message in the role published)[^:]*: \d+ (?:message|row)\(s\) in another role, first: /,
  },
  {
    name: "claim_select_then_update",
    breaks: "claims by SELECT, then UPDATE",
    cells: [2],
    expect: "caught",
    clause: /^round 1: exactly one winner \((?:[2-9]|[1-9]\d+)\)/,
  },
  {
    name: "claim_without_state_predicate",
    breaks: "claims by an UPDATE without the state predicate",
    cells: [2],
    expect: "caught",
    clause: /^round 1: exactly one winner \((?:[2-9]|[1-9]\d+)\)/,
  },
  {
    name: "rotation_two_transactions",
    breaks: "ends the parent, then creates the child, in two transactions",
    cells: [3],
    expect: "caught",
    clause: /: no compression orphan|: in-flight rotation \d+ complete or absent: partial rotation/,
  },
  {
    name: "publish_summary_as_c_string",
    breaks: "binds a rotation's summary as a C string: cut at an embedded NUL",
    cells: [3],
    expect: "caught",
    clause:
      /: every acknowledged handoff text kept as written .*: \d+ text\(s\) changed, first: (?:r-)?child-\d+ \(an embedded NUL\) read back as/,
  },
  {
    name: "record_content_as_c_string",
    breaks: "binds an obligation's content as a C string: cut at an embedded NUL",
    cells: [5],
    expect: "caught",
    clause:
      /every obligation's content kept as written .*: \d+ obligation\(s\) changed, first: [a-z0-9 ]+ \(an embedded NUL\) read back as/,
  },
  {
    name: "handoff_summary_only",
    breaks: "publishes a rotation's summary alone, dropping the turns carried over with it",
    cells: [3],
    expect: "caught",
    clause:
      /: every published handoff whole, in the order published: \d+ handoff\(s\) changed, first: (?:r-)?child-\d+ holds \["summary \d+"\], published \["summary \d+","carried /,
  },
  {
    name: "publish_child_first_two_transactions",
    breaks: "creates the child, then ends the parent, in two transactions",
    cells: [3],
    expect: "caught",
    clause: /: in-flight rotation \d+ complete or absent: partial rotation/,
  },
  {
    name: "rewind_reinsert_prefix",
    breaks: "rewinds by archiving every row and re-inserting the prefix",
    cells: [4],
    expect: "caught",
    clause: /: no prefix row duplicated|: rewound rows stay inactive, kept prefix ids unchanged/,
  },
  {
    name: "rewind_without_cas",
    breaks: "rewinds without the compare-and-swap on the active ids",
    cells: [4],
    expect: "caught",
    clause: /^compare-and-swap: .*: the rewind with stale active ids was not refused/,
  },
  {
    name: "resend_attempting_without_key",
    breaks: "re-sends an attempting obligation without an idempotent transport",
    cells: [5],
    expect: "caught",
    // It declares no policy: its resend implies marked-at-least-once, and it is unmarked.
    clause:
      /copies per obligation \(unmarked, marked\) under marked-at-least-once: .*an unmarked duplicate/,
  },
  {
    name: "mark_delivered_before_send",
    breaks: "books an obligation delivered before sending it",
    cells: [5],
    expect: "caught",
    // Booked before the send, it is no longer owed to a boot: nobody sends what was not sent.
    clause:
      /every obligation ends terminal under at-most-once: .* ended delivered|its boot claimed exactly what was owed: owed and not claimed/,
  },
  {
    name: "rotation_two_transactions_unmarked",
    breaks: "publishes in two transactions, with no crash point between them",
    cells: [3],
    expect: "caught",
    // The kill series always lands in the gap; a random kill sometimes gets there first.
    clause:
      /^(?:publishCompressionChild #2 killed before \w+ call \d+|random kill): (?:no compression orphan|in-flight rotation)/,
  },
  {
    name: "fork_text_as_c_string",
    breaks: "copies a fork's texts as C strings: a branch cut at an embedded NUL",
    cells: [4],
    expect: "caught",
    // A branch's text differs from the one written, where main's is kept.
    clause:
      /every text kept as written .*: \d+ text\(s\) changed, first: branch branch-\d+: [uae]\d+ \(an embedded NUL\) read back as/,
  },
  {
    name: "fork_copies_first_page",
    breaks: "copies a fork's messages through a paged read: its first 1,000 alone",
    cells: [4],
    expect: "caught",
    clause:
      /^long fork: .*: long-at-end \(forked at message \d+\): the branch holds 1000 messages, not the \d+ up to the fork \(its first 1000 alone\)/,
  },
  {
    name: "fork_two_transactions",
    breaks: "forks in two transactions (branch, then its messages), with no crash point",
    cells: [4],
    expect: "caught",
    // The kill series always lands in the gap; a random kill sometimes gets there first.
    clause:
      /^(?:forkSession #1 killed before \w+ call \d+|random kill): transcript is acknowledged step \d+ or in-flight fork/,
  },
  {
    name: "lock_liveness_ttl_only",
    breaks: "frees a dead holder's compression lock only when it expires",
    cells: [3],
    expect: "caught",
    clause:
      /: a fresh process takes the dead holder's lock of \S+ at once: tryAcquireCompressionLock returned false/,
  },
  {
    name: "pending_orphan_marked_unknown",
    breaks: "books a never-attempted orphan unknown instead of delivering it",
    cells: [5],
    expect: "caught",
    clause:
      /copies per obligation \(unmarked, marked\) under at-most-once: "effect \d" \(recorded and never attempted\): \(0,0\) .*never reached the platform/,
  },
  {
    name: "mode_switched_in_close",
    breaks: "runs in WAL and switches to the requested DELETE only in close()",
    ...IN_WAL_ON_DELETE,
  },
  {
    name: "append_swallows_busy",
    breaks: "swallows SQLITE_BUSY on an append and returns a guessed id",
    cells: [6],
    expect: "caught",
    clause:
      /^every acknowledged operation survives: \d+ acknowledged: \d+ acknowledged append\(s\) lost/,
  },
  {
    name: "append_deferred_no_retry",
    breaks: "appends by read-then-write in a DEFERRED transaction, without retrying",
    cells: [6],
    expect: "caught",
    clause:
      /^no untyped error: every process ended by our SIGKILL or by finishing: \w+: SqliteError/,
  },
  {
    name: "exit_zero_on_busy",
    breaks: "exits 0 mid-work when an append meets SQLITE_BUSY",
    cells: [6],
    expect: "caught",
    clause: /^no process exits 0 without finishing its work: \w+ exited 0 with \d+ of \d+/,
  },
  {
    name: "per_session_ids",
    breaks: "numbers message ids per session instead of across the store",
    cells: [6],
    expect: "caught",
    clause:
      /^real-time order: acknowledged before invoked means the smaller id: \w+ #\d+ \(id \d+\) was acknowledged/,
  },
  {
    name: "open_switch_no_wait",
    breaks: "switches the journal mode at open without waiting out a busy lock",
    cells: [6],
    expect: "caught",
    clause:
      /^a process opens a new file while another holds its write lock: the store failed to open/,
    // Leaving WAL is a switch on every library; on one with the WAL-reset bug the reference
    // keeps a file it finds in WAL in WAL, so other legs may never switch.
    leg: "delete",
  },
  staleActAccepted("publish_ignores_lease", {
    breaks: "publishes a rotation without checking the compression lock",
    owner: "compressionLock",
    orders: "(?:expired|before)",
    act: "publishCompressionChild",
  }),
  staleActAccepted("publish_ignores_expiry", {
    breaks: "publishes a rotation for the lock's holder even after its lease expired",
    owner: "compressionLock",
    orders: "expired",
    act: "publishCompressionChild",
  }),
  staleActAccepted("complete_handoff_ignores_owner", {
    breaks: "completes a running handoff whoever claimed it",
    owner: "handoffClaim",
    orders: "(?:before|after)",
    act: "completeHandoff",
  }),
  staleActAccepted("mark_delivered_ignores_fence", {
    breaks: "marks an obligation delivered by id, ignoring fence and state",
    owner: "outboxAttempt",
    orders: "after",
    act: "markDelivered",
  }),
  {
    name: "resolver_ignores_mode",
    breaks: "ignores the requested journal mode (always WAL)",
    ...IN_WAL_ON_DELETE,
  },
  // Cell 5's delivery-policy mutants (_policy_mutant.ts), per policy: an unmarked duplicate,
  // a maybe-sent obligation dropped, a claim without compare-and-swap, a later boot that
  // resends, a row left non-terminal; a store judged under the policy it does not keep,
  // each way; and a resume breaker.
  {
    name: "amo_resends_unmarked",
    breaks: "at-most-once: resends a maybe-sent obligation on a plain transport",
    cells: [5],
    expect: "caught",
    clause:
      /copies per obligation \(unmarked, marked\) under at-most-once: .*(more than once|sent again)/,
  },
  {
    name: "amo_books_maybe_sent_delivered",
    breaks: "at-most-once: books a maybe-sent obligation delivered, not unknown",
    cells: [5],
    expect: "caught",
    clause: /every obligation ends terminal under at-most-once: .* ended delivered/,
  },
  {
    name: "amo_sweep_without_cas",
    breaks: "at-most-once: claims the rows it read before its transaction, unguarded",
    cells: [5],
    expect: "caught",
    clause: /concurrent sweeps claimed disjoint sets, .*: .* claimed by [2-9] concurrent sweeps/,
  },
  {
    name: "amo_later_boot_resends",
    breaks: "at-most-once: a later boot resends what a dead recovery settled unknown",
    cells: [5],
    expect: "caught",
    // A racer whose sibling settled and died, or the later sweep: a later boot either way.
    clause:
      /under at-most-once: .*sent again|restarted sender was refused [\s\S]*a sweep after every recoverer finished took|later boots claim nothing/,
  },
  {
    name: "amo_leaves_attempting",
    breaks: "at-most-once: settles a maybe-sent obligation unknown but leaves it attempting",
    cells: [5],
    expect: "caught",
    clause: /every obligation ends terminal under at-most-once: .* ended attempting/,
  },
  {
    name: "amo_declared_keeps_marked",
    breaks: "keeps marked-at-least-once, declares at-most-once (the origin's, judged under ours)",
    cells: [5],
    expect: "caught",
    clause: /copies per obligation \(unmarked, marked\) under at-most-once: .*more than once/,
  },
  {
    name: "marked_resend_without_marker",
    breaks: "marked-at-least-once: resends a maybe-sent obligation without its marker",
    cells: [5],
    expect: "caught",
    clause:
      /copies per obligation \(unmarked, marked\) under marked-at-least-once: .*an unmarked duplicate/,
  },
  {
    name: "marked_drops_maybe_sent",
    breaks: "keeps at-most-once, declares marked-at-least-once (ours, judged under the origin's)",
    cells: [5],
    expect: "caught",
    clause:
      /copies per obligation \(unmarked, marked\) under marked-at-least-once: .*(a marked resend missing|never reached the platform)/,
  },
  {
    name: "marked_sweep_without_cas",
    breaks: "marked-at-least-once: claims the rows it read before its transaction, unguarded",
    cells: [5],
    expect: "caught",
    clause: /concurrent sweeps claimed disjoint sets, .*: .* claimed by [2-9] concurrent sweeps/,
  },
  {
    name: "marked_later_boot_resends",
    breaks: "marked-at-least-once: a later boot resends what a dead recovery delivered",
    cells: [5],
    expect: "caught",
    clause:
      /under marked-at-least-once: .*an extra marked copy|restarted sender was refused [\s\S]*a sweep after every recoverer finished took|later boots claim nothing/,
  },
  {
    name: "marked_leaves_attempting",
    breaks: "marked-at-least-once: a resend carries a stale fence and is never booked",
    cells: [5],
    expect: "caught",
    clause: /every obligation ends terminal under marked-at-least-once: .* ended attempting/,
  },
  {
    name: "outbox_stale_sequence",
    breaks: "takes obligation ids from a sequence a recovery leaves stale",
    cells: [5],
    expect: "caught",
    clause:
      /new life: (its kill landed, its boot exited 0: [\s\S]*markAttempting lost|no obligation silently lost)/,
  },
  {
    name: "marked_invisible_marker",
    breaks: "marked-at-least-once: resends behind a marker no reader can see (U+200B)",
    cells: [5],
    expect: "caught",
    clause: /every recovery marker shows: .*no visible character/,
  },
  {
    name: "later_boot_writes_side_file",
    breaks: "every boot rewrites a state file of its own beside the database",
    cells: [5],
    expect: "caught",
    clause: /later boots claim nothing and change nothing: .*outbox-state\.json/,
  },
  {
    name: "sweep_claims_two",
    breaks: "a sweep claims at most two obligations per call",
    cells: [5],
    expect: "caught",
    // The racers leave some of the owed set behind: the restarted application's sweep,
    // a later one, finds them (the killed boot's single sweep too, where a kind has one).
    clause:
      /restarted sender was refused [\s\S]*a sweep after every recoverer finished took|sweep claimed exactly what was owed: owed and not claimed/,
  },
  {
    name: "sweep_claims_three",
    breaks: "a sweep claims at most three obligations per call",
    cells: [5],
    expect: "caught",
    // Three racers of three each take the whole owed set, only spread over them.
    clause:
      /concurrent sweeps claimed disjoint sets, [^:]*: (r\d claimed \d, )+r\d claimed \d: a sweep takes every owed obligation it sees.*left behind|killed boot's sweep claimed exactly what was owed: owed and not claimed/,
  },
  {
    name: "omitted_transport_idempotent",
    breaks: "takes an omitted idempotentTransport for true: resends maybe-sent ones unmarked",
    cells: [5],
    expect: "caught",
    clause:
      /new life: copies per obligation \(unmarked, marked\) under at-most-once: .*(more than once|sent again)/,
  },
  ...RESUME_RESOLUTION_MUTANTS,
  ...BATCH_ATOMICITY_MUTANTS,
  ...ENDS_AND_REOPENS_MUTANTS,
  ...LEASE_RENEWAL_MUTANTS,
  ...PENDING_HANDOFFS_MUTANTS,
  ...CHECKPOINT_VALIDITY_MUTANTS,
];

/**
 * The module of a mutant.
 *
 * @param name The mutant's name.
 * @returns Its URL.
 */
export function mutantTarget(name: string): URL {
  return new URL(`./${name}.ts`, import.meta.url);
}

/** The correct-but-different store's target, which every cell must pass. */
export const ALT_STORE_TARGET: URL = new URL("../alt_store/target.ts", import.meta.url);

/** A tier beyond the SIGKILL cells (named as the engine's results name them). */
export type DeeperTier = "syscalls-crash" | "syscalls-power-loss" | "powerloss-cells";

/**
 * A mutant no SIGKILL cell can catch by design (a power loss, a torn write, a second life
 * on a recovered state shows it): the tiers meant to catch it, each failing `clause` (a
 * failed check of the clause's cell 1 outcome). The mutants task leaves these to the
 * tiers' own tests (`runner/sweep/mutants_itest.ts`).
 */
export interface TierMutantSpec {
  /** The module's file name in this folder, without `.ts`. */
  name: string;
  /** What it breaks, in a few words. */
  breaks: string;
  /** The tiers meant to catch it, with what a failed check must match. */
  tiers: Readonly<Partial<Record<DeeperTier, RegExp>>>;
  /** The cell whose outcome is checked (default cell 1). */
  cell?: MutantCell;
  /** The power-loss cells' sync points judged, the last N of each run (default 10). */
  instants?: number;
}

/** The mutants of the deeper tiers (power loss, torn writes, resume after recovery). */
export const TIER_MUTANTS: readonly TierMutantSpec[] = [
  {
    name: "sync_off",
    breaks: "commits appends with synchronous=OFF",
    tiers: {
      "syscalls-power-loss": /durability: acknowledged operations? .* lost/,
      "powerloss-cells": /nothing acknowledged lost in any power-loss state/,
    },
  },
  {
    name: "delete_full",
    breaks: "commits appends in DELETE mode with synchronous=FULL",
    tiers: {
      "syscalls-power-loss": /durability: acknowledged operation 0 \(append\) lost/,
      "powerloss-cells": /nothing acknowledged lost in any power-loss state/,
    },
  },
  {
    name: "jsonl_torn_tail_intolerant",
    breaks: "a JSON-lines log that cannot open when its last line is torn",
    tiers: {
      "syscalls-power-loss": /torn store\.db #\d+ at \d+ .*Cannot open store/,
      "powerloss-cells": /: torn store\.db #\d+ at \d+ /,
    },
  },
  {
    name: "jsonl_dsync_no_folder_sync",
    breaks: "a JSON-lines log written O_DSYNC whose folder is never synced after its creation",
    tiers: {
      // Its programs start from a log that exists: only a run that creates it shows it.
      "powerloss-cells":
        /nothing acknowledged lost in any power-loss state[\s\S]*unsynced-name-power-loss/,
    },
  },
  {
    name: "snapshot_unsynced_rename",
    breaks: "a JSON snapshot renamed into place before its data is synced",
    tiers: {
      "syscalls-power-loss":
        /durability: acknowledged operations? .* lost|recovery: cannot check the recovered store: CorruptStoreError/,
      "powerloss-cells":
        /nothing acknowledged lost in any power-loss state[\s\S]*unsynced-rename-power-loss/,
    },
  },
  {
    name: "folder_segment_unsynced",
    breaks: "a store in a folder that never syncs the folder after making a segment",
    tiers: {
      // Its programs start from a segment with room left: only a longer run makes one.
      "powerloss-cells":
        /nothing acknowledged lost in any power-loss state[\s\S]*unsynced-name-power-loss/,
    },
  },
  {
    name: "resume_stale_next_id",
    breaks: "takes the next message id from a counter a crash can leave stale",
    tiers: {
      "syscalls-crash": /resume after recovery \(append\+append\): the store after the second life/,
      "syscalls-power-loss":
        /resume after recovery \(append\+append\): the store after the second life/,
      "powerloss-cells": /a fresh process continues \d+ of \d+ recovered states/,
    },
  },
  {
    name: "outbox_delivered_unsynced",
    breaks: "commits markDelivered with synchronous=OFF",
    cell: 5,
    tiers: {
      // The next obligation's attempt syncs it: only a power loss in between loses it.
      "powerloss-cells":
        /nothing acknowledged lost in any power-loss state \(\w+\): \d+ acknowledged operations: \d+ of \d+ power-loss states[\s\S]*unsynced-ack-power-loss/,
    },
  },
  ...BATCH_ATOMICITY_TIER_MUTANTS,
  ...RESUME_RESOLUTION_TIER_MUTANTS,
  ...ENDS_AND_REOPENS_TIER_MUTANTS,
  ...LEASE_RENEWAL_TIER_MUTANTS,
  ...PENDING_HANDOFFS_TIER_MUTANTS,
];
