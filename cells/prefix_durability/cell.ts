import { ok } from "node:assert/strict";
import { countAcks, readAckJournal } from "../../harness/ack_journal.ts";
import { classifyExit, reapAll } from "../../harness/child.ts";
import { waitFor } from "../../harness/wait_for.ts";
import { type CellRun, defineCell } from "../engine/cell.ts";
import type { CellOptions } from "../engine/options.ts";
import { type Append, judgePrefix, type PrefixJudgement } from "./judge.ts";
import { checkSteps } from "../engine/state_check.ts";
import { diagnosed } from "../engine/diagnoses.ts";
import { startTallies, tally } from "../engine/tally.ts";
import { killAfterLastWrite, killLanding } from "../moves/kill.ts";
import { killSeries, seriesKind } from "../moves/kill_series.ts";
import { RESUMED_OPS, resumedStep } from "../moves/resume.ts";
import { CELL_METHODS, loadTarget, openTargetStore } from "../contract/target.ts";
import { PREFIX_WRITER } from "./_children.ts";

export { recoverMessages } from "./judge.ts";

/**
 * Options of {@linkcode prefixDurabilityCell}.
 *
 * @example
 * ```ts
 * import { prefixDurabilityCell, type PrefixDurabilityOptions } from "./cell.ts";
 * const options: PrefixDurabilityOptions = {
 *   target: new URL("../reference_target.ts", import.meta.url),
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
 * `integrity_check` ok and the store's invariants empty. Beside the first round, a child
 * creates a session (on a file of its own) and is SIGKILLed the instant the store
 * acknowledged it, nothing written after: the session must be there. Every leg.
 *
 * @param options Target, leg, thresholds.
 * @returns The test definitions to register with `Deno.test`.
 * @example
 * ```ts
 * import { prefixDurabilityCell } from "./cell.ts";
 * for (const test of await prefixDurabilityCell({ target: new URL("../reference_target.ts", import.meta.url) })) {
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
    // The kill series inside an append loads the recorder (LD_PRELOAD).
    preloads: true,
    async run(ctx, t) {
      startTallies(ctx);
      const db = ctx.run.file("store.db");
      const acksPath = ctx.run.file("acks.jsonl");
      const rounds = options.rounds ?? 3;
      const killTimes: number[] = [];
      // A session's creation is acknowledged too: beside round 1, a child creates one on
      // a file of its own and is killed with nothing written after it.
      const created = { db: ctx.run.file("created.db"), id: "cell1-created" };
      const creation = killAfterLastWrite(ctx, created.db, [
        { method: "createSession", session: created.id },
      ])
        .then(() => sessionMissing(ctx.target, created.db, created.id));
      creation.catch(() => {}); // settled below; a run that fails before is not news
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
          PREFIX_WRITER,
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
            await killLanding(child, `the writer after ${threshold} appends (round ${round})`);
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

      const [createdOutcome] = await Promise.allSettled([creation]);
      tally(ctx, "lost", createdOutcome.status === "fulfilled" && createdOutcome.value ? 1 : 0);
      await checkSteps(t, judged.checks);
      // The last round's state is continued too (the earlier ones were, by the next round).
      if (judged.lost === 0) await resumePrefix(ctx, t, db, acksPath, "last round");
      // Inside an append with no declared crash point: a kill at each of its calls (the
      // writer's third append: two acknowledged before it).
      const points = (await loadTarget(ctx.target)).crashPoints?.() ?? [];
      const kind = seriesKind(options.killSeries);
      if (kind !== "off" && !points.some((p) => p.startsWith("appendMessage:"))) {
        await killSeries(ctx, t, {
          op: "appendMessage",
          occurrence: 3,
          script: PREFIX_WRITER,
          args: (db, dir) => [db, `${dir}/acks.jsonl`],
          async check(db, dir, label) {
            const state = await judgePrefix(
              ctx.target,
              db,
              readAckJournal<Append>(`${dir}/acks.jsonl`),
            );
            await checkSteps(t, state.checks, `${label}: `);
          },
          resume: (db, dir, label) => resumePrefix(ctx, t, db, `${dir}/acks.jsonl`, label),
        }, kind);
      }
      await t.step("an acknowledged session creation survives a kill right after it", () => {
        if (createdOutcome.status === "rejected") throw createdOutcome.reason;
        const missing = createdOutcome.value;
        diagnosed(
          "ack-before-commit",
          () => ok(missing === null, `the acknowledged session ${created.id} is lost: ${missing}`),
        );
      });
    },
  }, options);
}

/**
 * Resume after recovery: a fresh writer continues the recovered transcript (from what the
 * store reads back), kills itself right after its third acknowledged append, and the file
 * is judged again with every acknowledged append of both lives.
 */
async function resumePrefix(
  ctx: CellRun,
  t: Deno.TestContext,
  db: string,
  acksPath: string,
  label: string,
): Promise<void> {
  const before = countAcks(acksPath);
  const what = `${label}, resumed`;
  const args = [db, acksPath, String(RESUMED_OPS)];
  const resume = { ops: "appends", script: PREFIX_WRITER, args, db, label };
  if (!await resumedStep(ctx, t, resume)) return;
  const acks = readAckJournal<Append>(acksPath);
  tally(ctx, "acknowledgedOps", acks.length - before);
  const state = await judgePrefix(ctx.target, db, acks);
  tally(ctx, "lost", state.lost);
  await checkSteps(t, state.checks, `${what}: `);
}

/** How the store at `db` shows that it has no session `id`, or `null` when it has it. */
async function sessionMissing(target: string, db: string, id: string): Promise<string | null> {
  const store = await openTargetStore(target, db);
  try {
    if (store.getSession) {
      return await store.getSession(id) ? null : `getSession("${id}") finds no session`;
    }
    if (store.listSessions) {
      const ids = (await store.listSessions()).map((session) => session.id);
      return ids.includes(id) ? null : `listSessions() lists ${JSON.stringify(ids)}`;
    }
    // With neither, an append asks: a store refuses one to a session it does not have
    // (one that creates sessions on append cannot be judged here, and passes).
    try {
      await store.appendMessage(id, { role: "user", content: "after the kill" });
      return null;
    } catch (error) {
      return `an append to it is refused: ${error instanceof Error ? error.message : error}`;
    }
  } finally {
    await store.close();
  }
}
