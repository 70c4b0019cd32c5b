// The cells against the reference store, on the leg of this process
// (SESSION_DB_JOURNAL_MODE and DENO_SQLITE_PATH).
import { ok } from "node:assert/strict";
import { concurrentWritersCell } from "./concurrent_writers.ts";
import { fencedOwnershipCell } from "./fenced_ownership.ts";
import { registerCells } from "./register.ts";
import { runDefinitions } from "./run_definitions.ts";

const target = new URL("./reference_target.ts", import.meta.url);
await registerCells({ target, cells: [1, 2, 3, 4, 5] });
// At this load the reference store never refuses a write (its busy deadline is 60 s).
for (const test of await concurrentWritersCell({ target, maxRefusals: 0 })) Deno.test(test);
// The claimed handoff is left out: the reference store has no claimant fence yet
// (known gap below).
for (
  const test of await fencedOwnershipCell({ target, owners: ["compressionLock", "outboxAttempt"] })
) {
  Deno.test(test);
}

// Known gap (issue 18): SessionDB#completeHandoff completes whichever claim is running,
// so a claimant stopped past its lease completes the claim another process took over.
// This test fails once the store refuses it: then add "handoffClaim" above and delete it.
Deno.test({
  name: "known gap: cell 7 catches the reference store's unfenced completeHandoff",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const definitions = await fencedOwnershipCell({
      target,
      owners: ["handoffClaim"],
      keepEvidence: false,
    });
    const [outcome] = await runDefinitions(definitions);
    if (outcome?.status === "SKIP") {
      console.log(`  SKIP: ${outcome.detail}`);
      return;
    }
    ok(
      outcome?.status === "FAIL" &&
        /^handoffClaim · before: the stale completeHandoff is refused with a typed error: .* was accepted: returned true/
          .test(outcome.detail ?? ""),
      `the gap is closed or moved (${outcome?.status}: ${outcome?.detail}): enable handoffClaim in cell 7 above and delete this test`,
    );
  },
});
