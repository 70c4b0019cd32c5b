import { ok, strictEqual } from "node:assert/strict";
import { countReady, releaseBarrier } from "../harness/barrier.ts";
import { type Child, classifyExit, reapAll } from "../harness/child.ts";
import { integrityIfSqlite } from "../harness/db_audit.ts";
import { waitFor } from "../harness/wait_for.ts";
import { defineCell } from "./_cell.ts";
import type { CellOptions } from "./cell_options.ts";
import { startTallies, tally } from "./_tally.ts";
import { CELL_METHODS, openTargetStore } from "./target.ts";

/**
 * Options of {@linkcode consumeOnceCell}.
 *
 * @example
 * ```ts
 * import { consumeOnceCell, type ConsumeOnceOptions } from "./consume_once.ts";
 * const options: ConsumeOnceOptions = {
 *   target: new URL("./reference_target.ts", import.meta.url),
 *   claimants: 16,
 *   rounds: 3,
 * };
 * for (const test of await consumeOnceCell(options)) Deno.test(test);
 * ```
 */
export interface ConsumeOnceOptions extends CellOptions {
  /** Racing claimants (default 8). */
  claimants?: number;
  /** Races run one after another, each on a fresh pending handoff (default 1). */
  rounds?: number;
}

/**
 * Cell 2, consume-once: a parked handoff is claimed by exactly one of N racing
 * processes. N = 8 claimant children open the store, then are released together by a
 * file barrier; each exits 0 (won) or 10 (lost), and any other code fails the cell with
 * that child's stderr. Exactly one 0; the stored state is `running`.
 *
 * Default leg only, by design: the property rests on one predicated
 * `UPDATE … WHERE handoff_state = 'pending'`, which SQLite serialises under the write
 * lock the same way in every journal mode.
 *
 * @param options Target, leg, claimant count, rounds.
 * @returns The test definitions to register with `Deno.test`.
 * @example
 * ```ts
 * import { consumeOnceCell } from "./consume_once.ts";
 * for (const test of await consumeOnceCell({ target: new URL("./reference_target.ts", import.meta.url) })) {
 *   Deno.test(test);
 * }
 * ```
 */
export function consumeOnceCell(options: ConsumeOnceOptions): Promise<Deno.TestDefinition[]> {
  const claimants = options.claimants ?? 8;
  const rounds = options.rounds ?? 1;
  return defineCell({
    id: 2,
    title: "consume-once",
    legs: "default",
    legReason:
      "the clause rests on one predicated UPDATE, serialised by the write lock in every journal mode",
    requires: CELL_METHODS[2],
    async run(ctx, t) {
      startTallies(ctx);
      const db = ctx.run.file("store.db");
      const winners: number[] = [];
      for (let round = 0; round < rounds; round++) {
        const setup = await openTargetStore(ctx.target, db);
        const session = `cell2-${round}`;
        await setup.createSession(session);
        ok(
          await setup.requestHandoff!(session, "cell2"),
          "requestHandoff did not park the session",
        );
        await setup.close();

        const dir = ctx.run.file(`round-${round}`);
        await Deno.mkdir(dir);
        const barrier = `${dir}/go`;
        const children: Child[] = [];
        try {
          for (let i = 0; i < claimants; i++) {
            children.push(ctx.spawn("_claimant.ts", [db, dir, `c${i}`, barrier, session]));
          }
          await waitFor(() => countReady(dir) >= claimants, {
            what: `${claimants} claimants ready`,
            deadlineMs: 60_000,
            children,
            observed: () => `${countReady(dir)} ready`,
          });
          releaseBarrier(barrier);
          await Promise.all(children.map((child) => child.status));
        } finally {
          await reapAll(children);
        }
        const classes = children.map((child) => classifyExit(child.exited!));
        const crashed = children.filter((_, i) =>
          classes[i]!.kind !== "won" && classes[i]!.kind !== "lost"
        );
        const won = classes.filter((c) => c.kind === "won").length;
        winners.push(won);
        // A claim is acknowledged to its claimant by the store's `true` (exit 0).
        tally(ctx, "acknowledgedOps", won);
        ctx.note("exitCodes", classes.map((c) => c.signal ?? c.code));
        await t.step(`round ${round + 1}: every claimant exited 0 or 10`, () => {
          ok(
            crashed.length === 0,
            `${crashed.length} claimant(s) crashed (neither won nor lost):\n${
              crashed.map((child) => child.describe()).join("\n")
            }`,
          );
        });
        await t.step(`round ${round + 1}: exactly one winner (${won})`, () => {
          strictEqual(won, 1, `${won} claimants won the same handoff`);
        });
        const check = await openTargetStore(ctx.target, db);
        const state = await check.getHandoffState!(session);
        const invariants = check.checkInvariants ? await check.checkInvariants() : [];
        await check.close();
        // A claim is lost when its winner exited 0 and the state does not show it.
        tally(ctx, "lost", won > 0 && state !== "running" ? won : 0);
        await t.step(`round ${round + 1}: stored state running`, () => {
          strictEqual(state, "running");
          const integrity = integrityIfSqlite(db);
          ok(integrity === undefined || integrity === "ok", `integrity_check: ${integrity}`);
          ok(invariants.length === 0, `invariants: ${invariants.join("; ")}`);
        });
      }
      ctx.note("winnersPerRound", winners);
    },
  }, options);
}
