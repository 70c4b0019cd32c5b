import { ok } from "node:assert/strict";
import { countAcks, readAckJournal } from "../harness/ack_journal.ts";
import { classifyExit, killWhileAlive, reapAll } from "../harness/child.ts";
import { waitFor } from "../harness/wait_for.ts";
import { defineCell } from "./_cell.ts";
import type { CellOptions } from "./cell_options.ts";
import { type Append, judgePrefix, type PrefixJudgement } from "./_prefix_state.ts";
import { checkSteps } from "./_state_check.ts";
import { startTallies, tally } from "./_tally.ts";
import { CELL_METHODS } from "./target.ts";

export { recoverMessages } from "./_prefix_state.ts";

/**
 * Options of {@linkcode prefixDurabilityCell}.
 *
 * @example
 * ```ts
 * import { prefixDurabilityCell, type PrefixDurabilityOptions } from "./prefix_durability.ts";
 * const options: PrefixDurabilityOptions = {
 *   target: new URL("./reference_target.ts", import.meta.url),
 *   minAcknowledged: 500,
 *   rounds: 5,
 * };
 * for (const test of await prefixDurabilityCell(options)) Deno.test(test);
 * ```
 */
export interface PrefixDurabilityOptions extends CellOptions {
  /** Acknowledged appends to wait for before the kill (default 200). */
  minAcknowledged?: number;
  /** How long to wait for them (default 60 s). */
  deadlineMs?: number;
  /**
   * Kill rounds on the same database, each resuming the writer (default 3): odd rounds
   * kill at a random moment, even rounds the instant an append is acknowledged.
   */
  rounds?: number;
}

/**
 * Cell 1, prefix durability: acknowledged appends survive a hard crash. A child
 * appends `m0, m1, …` and journals each acknowledged `{ i, rowid }`; after at least
 * 200 it is SIGKILLed while alive. The recovered messages must contain every
 * acknowledged append and be exactly `m0..m(N-1)` with N >= acknowledged (no gap,
 * duplicate or reorder), rowids strictly increasing, two recovery passes identical,
 * `integrity_check` ok and the store's invariants empty. Every leg.
 *
 * @param options Target, leg, thresholds.
 * @returns The test definitions to register with `Deno.test`.
 * @example
 * ```ts
 * import { prefixDurabilityCell } from "./prefix_durability.ts";
 * for (const test of await prefixDurabilityCell({ target: new URL("./reference_target.ts", import.meta.url) })) {
 *   Deno.test(test);
 * }
 * ```
 */
export function prefixDurabilityCell(
  options: PrefixDurabilityOptions,
): Promise<Deno.TestDefinition[]> {
  const threshold = options.minAcknowledged ?? 200;
  return defineCell({
    id: 1,
    title: "prefix durability",
    legs: "all",
    requires: CELL_METHODS[1],
    async run(ctx, t) {
      startTallies(ctx);
      const db = ctx.run.file("store.db");
      const acksPath = ctx.run.file("acks.jsonl");
      const rounds = options.rounds ?? 3;
      const killTimes: number[] = [];
      let judged!: PrefixJudgement;
      let acks: Append[] = [];
      for (let round = 1; round <= rounds; round++) {
        const before = countAcks(acksPath);
        // Even rounds: the writer SIGKILLs itself the instant its k-th append of the
        // round is acknowledged, the moment a store that acknowledges before COMMIT
        // is exposed. Odd rounds: the parent kills it at a random moment.
        const selfKill = round % 2 === 0
          ? threshold + Math.floor(ctx.random() * threshold)
          : undefined;
        const child = ctx.spawn(
          "_prefix_writer.ts",
          [db, acksPath, ...(selfKill ? [String(selfKill)] : [])],
        );
        try {
          if (selfKill) {
            await waitFor(() => child.exited !== undefined, {
              what:
                `the writer to kill itself after acknowledged append ${selfKill} (round ${round})`,
              deadlineMs: options.deadlineMs ?? 60_000,
              observed: () => `${countAcks(acksPath) - before} acknowledged this round`,
            });
            ok(classifyExit(child.exited!).kind === "killed", child.describe());
            killTimes.push(-selfKill);
          } else {
            const waited = await waitFor(() => countAcks(acksPath) >= before + threshold, {
              what: `${threshold} acknowledged appends (round ${round})`,
              deadlineMs: options.deadlineMs ?? 60_000,
              children: [child],
              observed: () => `${countAcks(acksPath) - before} acknowledged this round`,
            });
            killTimes.push(Math.round(waited));
            await killWhileAlive(child);
          }
        } finally {
          await reapAll([child]);
          ctx.note("childStderr", child.stderr.slice(-2000));
        }
        // The writer died at the instant of an acknowledgement (between appends) or at
        // a random moment (inside one).
        ctx.observeLeg(db, `round ${round}`, selfKill !== undefined);
        acks = readAckJournal<Append>(acksPath);
        judged = await judgePrefix(ctx.target, db, acks);
        // A round that already lost an acknowledged append ends the run: check now.
        if (judged.lost > 0) break;
      }
      ctx.note("rounds", killTimes.length);
      ctx.note("killAfterMs", killTimes);
      ctx.note("acknowledged", acks.length);
      ctx.note("recovered", judged.rows.length);
      // Every round ended in one SIGKILL (the parent's, or the writer's own).
      tally(ctx, "sigkills", killTimes.length);
      tally(ctx, "acknowledgedOps", acks.length);
      tally(ctx, "lost", judged.lost);

      await checkSteps(t, judged.checks);
    },
  }, options);
}
