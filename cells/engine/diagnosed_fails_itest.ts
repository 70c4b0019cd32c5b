// Each known failure pattern on a real FAIL of a store that has it (a mutant of the
// catalogue), attached by the check that holds the evidence: the FAIL carries the pattern's
// cause and fix. A FAIL of another kind carries none of them. The runs start as the file
// loads, all at once; each test awaits its own.
import { deepStrictEqual, ok } from "node:assert/strict";
import { currentLeg } from "../../harness/legs.ts";
import type { PatternId } from "./diagnoses.ts";
import { powerLossPrefixCell, powerLossPrefixRun } from "../prefix_durability/power_loss.ts";
import { CELLS } from "../register.ts";
import { type DefinitionOutcome, runDefinitions } from "./run_definitions.ts";
import { mutantTarget } from "../testdata/mutants/catalogue.ts";
import { testFolder } from "../../internal/_test_folder.ts";

const options = { sanitizeResources: false, sanitizeOps: false };
// The default leg, which every SQLite honours: each case is judged, never skipped.
const leg = { ...currentLeg(), name: "default" as const };

interface Case {
  mutant: string;
  /** The pattern the FAIL must carry, or `null`: a FAIL with no known pattern. */
  pattern: PatternId | null;
  run: () => Promise<DefinitionOutcome[]>;
}

const target = (name: string) => ({ target: mutantTarget(name), leg, keepEvidence: false });
const small = { minAcknowledged: 20, subsets: 6, instants: 6, kills: ["ack"] as const };

const CASES: Case[] = [
  {
    mutant: "ack_before_commit",
    pattern: "ack-before-commit",
    run: async () =>
      runDefinitions(await CELLS[1]({ ...target("ack_before_commit"), minAcknowledged: 50 })),
  },
  {
    mutant: "batch_commit_50",
    pattern: "ack-before-commit",
    run: async () =>
      runDefinitions(await CELLS[1]({ ...target("batch_commit_50"), minAcknowledged: 50 })),
  },
  {
    mutant: "claim_without_state_predicate",
    pattern: "claim-without-predicate",
    run: async () => runDefinitions(await CELLS[2](target("claim_without_state_predicate"))),
  },
  {
    mutant: "lock_liveness_ttl_only",
    pattern: "lock-held-past-crash",
    run: async () =>
      runDefinitions(await CELLS[3]({ ...target("lock_liveness_ttl_only"), minAcknowledged: 20 })),
  },
  {
    mutant: "rotation_two_transactions",
    pattern: "rotation-not-atomic",
    run: async () =>
      runDefinitions(
        await CELLS[3]({ ...target("rotation_two_transactions"), minAcknowledged: 20 }),
      ),
  },
  {
    mutant: "refresh_revives_lapsed",
    pattern: "stale-renewal-accepted",
    run: async () => runDefinitions(await CELLS[11](target("refresh_revives_lapsed"))),
  },
  {
    mutant: "append_deferred_no_retry",
    pattern: "busy-untyped",
    run: async () => runDefinitions(await CELLS[6](target("append_deferred_no_retry"))),
  },
  {
    mutant: "delete_full",
    pattern: "delete-full-power-loss",
    run: async () =>
      runDefinitions(await powerLossPrefixCell({ ...target("delete_full"), ...small })),
  },
  {
    mutant: "sync_off",
    pattern: "unsynced-ack-power-loss",
    run: async () => runDefinitions(await powerLossPrefixCell({ ...target("sync_off"), ...small })),
  },
  {
    mutant: "append_text_as_c_string",
    pattern: "text-changed",
    run: async () =>
      runDefinitions(await CELLS[1]({ ...target("append_text_as_c_string"), minAcknowledged: 20 })),
  },
  {
    mutant: "append_identical_merged",
    pattern: "identical-write-merged",
    run: async () =>
      runDefinitions(await CELLS[1]({ ...target("append_identical_merged"), minAcknowledged: 20 })),
  },
  {
    mutant: "roles_not_kept",
    pattern: "role-changed",
    run: async () =>
      runDefinitions(await CELLS[1]({ ...target("roles_not_kept"), minAcknowledged: 20 })),
  },
  // A store nobody here wrote, on its own SQLite, in DELETE mode with FULL (not its default).
  {
    mutant: "targets/node_sqlite.ts with NODE_SQLITE_SYNCHRONOUS=full, delete leg",
    pattern: "delete-full-power-loss",
    run: async () =>
      runDefinitions(
        await powerLossPrefixCell({
          target: new URL("../../targets/node_sqlite.ts", import.meta.url),
          leg: { ...leg, name: "delete" },
          keepEvidence: false,
          env: { NODE_SQLITE_SYNCHRONOUS: "full" },
          ...small,
        }),
      ),
  },
  // A FAIL whose evidence shows none of the patterns: recovery out of order loses nothing.
  {
    mutant: "recovery_wrong_order",
    pattern: null,
    run: async () =>
      runDefinitions(await CELLS[1]({ ...target("recovery_wrong_order"), minAcknowledged: 50 })),
  },
];

const runs = CASES.map((c) => {
  const promise = c.run();
  promise.catch(() => {}); // its test reports it
  return promise;
});

for (const [i, c] of CASES.entries()) {
  Deno.test({
    name: c.pattern
      ? `mutant ${c.mutant}: its FAIL carries ${c.pattern}'s cause and fix`
      : `mutant ${c.mutant}: its FAIL carries no known pattern`,
    ...options,
    async fn() {
      const outcomes = await runs[i]!;
      ok(outcomes.length === 1, `${outcomes.length} outcomes`);
      const [outcome] = outcomes;
      ok(outcome?.status === "FAIL", `${outcome?.status}: ${outcome?.detail}`);
      const patterns = (outcome.diagnoses ?? []).map((d) => d.pattern);
      deepStrictEqual(patterns, c.pattern ? [c.pattern] : [], outcome.detail);
      if (c.pattern) {
        const [d] = outcome.diagnoses!;
        ok(
          outcome.detail?.includes(`diagnosis ${c.pattern}: ${d!.cause}; fix: ${d!.fix}`),
          `the FAIL's text lacks the diagnosis: ${outcome.detail}`,
        );
      }
      console.log(`  ${outcome.checks?.[0]}`);
    },
  });
}

// The power-loss patterns come from the recorder's log: the reference store (EXTRA in
// DELETE mode, FULL in WAL mode) shows neither at any acknowledgement, on either mode.
for (const journalMode of ["delete", "wal"] as const) {
  Deno.test({
    name: `the reference store's log shows no power-loss pattern (${journalMode})`,
    ...options,
    async fn() {
      const dir = testFolder();
      try {
        const run = await powerLossPrefixRun({
          leg: { ...leg, name: journalMode },
          target: new URL("../reference_target.ts", import.meta.url).href,
          dir,
          kill: "ack",
          ...small,
        });
        ok(run.acknowledged > 0, "nothing acknowledged");
        ok(run.pattern === undefined, `${run.pattern} on ${run.onDisk}`);
      } finally {
        await Deno.remove(dir, { recursive: true });
      }
    },
  });
}
