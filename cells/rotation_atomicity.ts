import { ok } from "node:assert/strict";
import { readAckJournal } from "../harness/ack_journal.ts";
import { type CellRun, defineCell } from "./_cell.ts";
import type { CellOptions } from "./cell_options.ts";
import { awaitCrash, killAfterAcks, legHonouredStep } from "./_kill.ts";
import { judgeRotations, type Rotation } from "./_rotation_state.ts";
import { checkSteps } from "./_state_check.ts";
import { startTallies, tally } from "./_tally.ts";
import { CELL_METHODS, loadTarget } from "./target.ts";

/**
 * Options of {@linkcode rotationAtomicityCell}.
 *
 * @example
 * ```ts
 * import { rotationAtomicityCell, type RotationAtomicityOptions } from "./rotation_atomicity.ts";
 * const options: RotationAtomicityOptions = {
 *   target: new URL("./reference_target.ts", import.meta.url),
 *   minAcknowledged: 20,
 *   crashPoints: false, // random kills only
 * };
 * for (const test of await rotationAtomicityCell(options)) Deno.test(test);
 * ```
 */
export interface RotationAtomicityOptions extends CellOptions {
  /** Acknowledged rotations to wait for before the random kill (default 50). */
  minAcknowledged?: number;
  /** How long to wait for them (default 60 s). */
  deadlineMs?: number;
  /** Also crash at every `publishCompressionChild:*` point the target lists (default true). */
  crashPoints?: boolean;
}

async function checkRun(
  ctx: CellRun,
  t: Deno.TestContext,
  label: string,
  db: string,
  acksPath: string,
): Promise<void> {
  const acks = readAckJournal<Rotation>(acksPath);
  const probe = [acks[0], acks.at(-1)].filter((a) => a !== undefined).map((a) => a.parentId);
  const judged = await judgeRotations(ctx.target, db, acks, probe);
  ctx.note(`${label}.acknowledged`, acks.length);
  ctx.note(`${label}.sessions`, judged.sessions.length);
  tally(ctx, "acknowledgedOps", acks.length);
  tally(ctx, "lost", judged.lost);
  await checkSteps(t, judged.checks, `${label}: `);
}

/**
 * Cell 3, rotation atomicity: a compression rotation is visible entirely or not at
 * all. A child loops create `parent-i`, append, take the compression lock (holder
 * `cell3:pid=<pid>`), publish `child-i` with its summary, release, journal; it is
 * SIGKILLed after at least 50 acknowledged rotations, and then once more at every
 * `publishCompressionChild:*` crash point the target lists. Each time: no parent ended
 * `compression` without its child, every acknowledged rotation complete, the in-flight
 * one complete or absent, appends to a rotated parent refused with
 * `CompressionSessionClosedError`, recovery deterministic, invariants hold. Every leg.
 *
 * @param options Target, leg, thresholds.
 * @returns The test definitions to register with `Deno.test`.
 * @example
 * ```ts
 * import { rotationAtomicityCell } from "./rotation_atomicity.ts";
 * for (const test of await rotationAtomicityCell({ target: new URL("./reference_target.ts", import.meta.url) })) {
 *   Deno.test(test);
 * }
 * ```
 */
export function rotationAtomicityCell(
  options: RotationAtomicityOptions,
): Promise<Deno.TestDefinition[]> {
  const threshold = options.minAcknowledged ?? 50;
  return defineCell({
    id: 3,
    title: "rotation atomicity",
    legs: "all",
    requires: CELL_METHODS[3],
    async run(ctx, t) {
      startTallies(ctx);
      const db = ctx.run.file("store.db");
      const acksPath = ctx.run.file("acks.jsonl");
      const child = ctx.spawn("_rotator.ts", [db, acksPath, "0"]);
      await killAfterAcks(ctx, child, acksPath, threshold, "rotations", options.deadlineMs);
      await legHonouredStep(ctx, t, db);
      await checkRun(ctx, t, "random kill", db, acksPath);

      if (options.crashPoints === false) return;
      const points = ((await loadTarget(ctx.target)).crashPoints?.() ?? [])
        .filter((p) => p.startsWith("publishCompressionChild:"));
      ctx.note("crashPoints", points);
      for (const point of points) {
        const pointDb = ctx.run.file(`${point.replace(/\W/g, "_")}.db`);
        const pointAcks = `${pointDb}.acks.jsonl`;
        // @2: the first rotation is acknowledged, the second dies at the point.
        const crasher = ctx.spawn("_rotator.ts", [pointDb, pointAcks, "0"], {
          env: { SESSION_DB_CRASH_AT: `${point}@2` },
        });
        const killed = await awaitCrash(ctx, crasher, point, pointAcks);
        await t.step(`${point}: the child died there by SIGKILL`, () => {
          ok(killed, crasher.describe());
        });
        await checkRun(ctx, t, point, pointDb, pointAcks);
      }
    },
  }, options);
}
