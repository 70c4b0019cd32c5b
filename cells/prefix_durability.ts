import { deepStrictEqual, ok } from "node:assert/strict";
import { countAcks, readAckJournal } from "../harness/ack_journal.ts";
import { classifyExit, killWhileAlive, reapAll } from "../harness/child.ts";
import { integrityIfSqlite } from "../harness/db_audit.ts";
import { waitFor } from "../harness/wait_for.ts";
import { defineCell } from "./_cell.ts";
import type { CellOptions } from "./cell_options.ts";
import { startTallies, tally } from "./_tally.ts";
import { CELL_METHODS, openTargetStore, type StoredMessage } from "./target.ts";

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
 * Reads the recovered transcript of a run once, through the target's own store.
 *
 * @example
 * ```ts
 * import { recoverMessages } from "./prefix_durability.ts";
 * const target = new URL("./reference_target.ts", import.meta.url).href;
 * const path = `${Deno.makeTempDirSync()}/s.db`; // the file a killed writer left
 * const { messages, invariants } = await recoverMessages(target, path, "s1");
 * console.log(messages.length, invariants); // 0 []
 * ```
 */
export async function recoverMessages(
  target: string,
  dbPath: string,
  sessionId: string,
): Promise<{ messages: StoredMessage[]; invariants: string[] }> {
  const store = await openTargetStore(target, dbPath);
  try {
    const messages = (await store.getMessages(sessionId)).map(({ id, role, content }) => ({
      id,
      role,
      content,
    }));
    const invariants = store.checkInvariants ? await store.checkInvariants() : [];
    return { messages, invariants };
  } finally {
    await store.close();
  }
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
      let first!: Awaited<ReturnType<typeof recoverMessages>>;
      let second!: typeof first;
      let acks: { i: number; rowid: number }[] = [];
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
        acks = readAckJournal<{ i: number; rowid: number }>(acksPath);
        first = await recoverMessages(ctx.target, db, "cell1");
        second = await recoverMessages(ctx.target, db, "cell1");
        // A round that already lost an acknowledged append ends the run: check now.
        const recovered = new Set(first.messages.map((m) => m.id));
        if (acks.some((ack) => !recovered.has(ack.rowid))) break;
      }
      ctx.note("rounds", killTimes.length);
      ctx.note("killAfterMs", killTimes);
      ctx.note("acknowledged", acks.length);
      const rows = first.messages;
      ctx.note("recovered", rows.length);
      // Every round ended in one SIGKILL (the parent's, or the writer's own).
      tally(ctx, "sigkills", killTimes.length);
      tally(ctx, "acknowledgedOps", acks.length);
      const stored = new Map(rows.map((row) => [row.id, row.content]));
      tally(ctx, "lost", acks.filter((ack) => stored.get(ack.rowid) !== `m${ack.i}`).length);

      await t.step(`nothing acknowledged lost: ${acks.length} acknowledged`, () => {
        const byId = new Map(rows.map((row) => [row.id, row.content]));
        const lost = acks.filter((ack) => byId.get(ack.rowid) !== `m${ack.i}`);
        ok(
          lost.length === 0,
          `${lost.length} acknowledged append(s) lost or changed, first: ${
            JSON.stringify(lost[0])
          }`,
        );
      });
      await t.step(`contiguous prefix m0..m${rows.length - 1}, N >= acknowledged`, () => {
        const bad = rows.findIndex((row, i) => row.content !== `m${i}`);
        ok(
          bad === -1,
          `row ${bad} is ${
            JSON.stringify(rows[bad]?.content)
          }, expected "m${bad}" (gap, duplicate or reorder)`,
        );
        ok(rows.length >= acks.length, `${rows.length} recovered < ${acks.length} acknowledged`);
      });
      await t.step("rowids strictly increasing", () => {
        const bad = rows.findIndex((row, i) => i > 0 && row.id <= rows[i - 1]!.id);
        ok(bad === -1, `rowid ${rows[bad]?.id} at ${bad} does not increase`);
      });
      await t.step("two recovery passes identical", () => {
        deepStrictEqual(second.messages, first.messages);
      });
      await t.step("integrity_check ok and invariants hold", () => {
        const integrity = integrityIfSqlite(db);
        ok(integrity === undefined || integrity === "ok", `integrity_check: ${integrity}`);
        deepStrictEqual(first.invariants, []);
      });
    },
  }, options);
}
