import { deepStrictEqual, ok } from "node:assert/strict";
import { readAckJournal } from "../harness/ack_journal.ts";
import { classifyExit } from "../harness/child.ts";
import { LOCK_TTL_MS } from "./_lock_taker.ts";
import { type CellRun, defineCell } from "./_cell.ts";
import type { CellOptions } from "./cell_options.ts";
import { awaitCrash, killAfterAcks, killWhenReady, untilExited } from "./_kill.ts";
import { killSeries, seriesKind } from "./_kill_series.ts";
import { judgeRotations, orphans, recover, type Rotation } from "./_rotation_state.ts";
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

/** Runs a child to its end (bounded) and returns its last stdout line as JSON. */
async function runToEnd(ctx: CellRun, script: string, args: string[], what: string) {
  const child = ctx.spawn(script, args);
  await untilExited(child, what, 60_000);
  return { child, said: () => JSON.parse(child.stdout.trim().split("\n").at(-1) ?? "{}") };
}

/**
 * Lock liveness: a fresh process takes the compression lock of `parentId` (held, if at
 * all, by a killed process, with a TTL far longer than the cell) in one attempt and
 * completes a rotation with it.
 */
async function takeOver(
  ctx: CellRun,
  t: Deno.TestContext,
  label: string,
  db: string,
  parentId: string,
): Promise<void> {
  const childId = `taken-${parentId}`;
  const { child, said } = await runToEnd(
    ctx,
    "_lock_taker.ts",
    [db, parentId, childId],
    `a fresh process to take the lock of ${parentId}`,
  );
  await t.step(
    `${label}: a fresh process takes the dead holder's lock of ${parentId} at once`,
    () => {
      ok(classifyExit(child.exited!).kind === "won", `the taker failed: ${child.describe()}`);
      const { taken, tookMs } = said() as { taken?: boolean; tookMs?: number };
      ok(
        taken === true,
        `tryAcquireCompressionLock returned ${taken} (${tookMs} ms) for the lock of a killed holder: a dead process's lock must be recoverable at once, not after its TTL of ${LOCK_TTL_MS} ms`,
      );
    },
  );
  const recovered = await recover(ctx.target, db, []);
  await t.step(`${label}: the taker's rotation of ${parentId} is complete`, () => {
    const parent = recovered.sessions.find((s) => s.id === parentId);
    const child = recovered.sessions.find((s) => s.id === childId);
    ok(parent?.endReason === "compression", `${parentId}: ${JSON.stringify(parent)}`);
    ok(child?.parentSessionId === parentId, `${childId}: ${JSON.stringify(child)}`);
    deepStrictEqual(orphans(recovered.sessions), []);
  });
  ctx.note("takeovers", Number(ctx.figures.takeovers ?? 0) + 1);
}

/** After a killed rotation: take over the in-flight parent when it is still open. */
async function takeOverInFlight(
  ctx: CellRun,
  t: Deno.TestContext,
  label: string,
  db: string,
  acksPath: string,
): Promise<void> {
  const next = (readAckJournal<Rotation>(acksPath).at(-1)?.i ?? -1) + 1;
  const parentId = `parent-${next}`;
  const parent = (await recover(ctx.target, db, [])).sessions.find((s) => s.id === parentId);
  if (parent && parent.endedAt === null) await takeOver(ctx, t, label, db, parentId);
  else ctx.note(`${label}.takeOver`, `${parentId} ${parent ? "already rotated" : "not created"}`);
}

/** A holder killed while it holds the lock, then taken over at once. */
async function deadHolder(ctx: CellRun, t: Deno.TestContext): Promise<void> {
  const db = ctx.run.file("dead-holder.db");
  const ready = ctx.run.file("dead-holder.ready");
  const holder = ctx.spawn("_lock_holder.ts", [db, ready]);
  await killWhenReady(holder, ready, "the holder to take the compression lock", 60_000);
  tally(ctx, "sigkills", 1);
  ctx.observeLeg(db, "dead holder (waiting with the lock)", true);
  await takeOver(ctx, t, "dead holder", db, "held");
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
    preloads: true,
    async run(ctx, t) {
      startTallies(ctx);
      const db = ctx.run.file("store.db");
      const acksPath = ctx.run.file("acks.jsonl");
      const child = ctx.spawn("_rotator.ts", [db, acksPath, "0"]);
      await killAfterAcks(ctx, child, db, acksPath, threshold, "rotations", options.deadlineMs);
      await checkRun(ctx, t, "random kill", db, acksPath);
      await takeOverInFlight(ctx, t, "random kill", db, acksPath);
      await deadHolder(ctx, t);

      const points = ((await loadTarget(ctx.target)).crashPoints?.() ?? [])
        .filter((p) => p.startsWith("publishCompressionChild:"));
      // Inside a publish with no declared crash point: a kill at each of its calls (the
      // second rotation's, so one was acknowledged).
      const kind = seriesKind(options.killSeries);
      if (kind !== "off" && points.length === 0) {
        await killSeries(ctx, t, {
          op: "publishCompressionChild",
          occurrence: 2,
          script: "_rotator.ts",
          args: (db, dir) => [db, `${dir}/acks.jsonl`, "0"],
          check: (db, dir, label) => checkRun(ctx, t, label, db, `${dir}/acks.jsonl`),
        }, kind);
      }

      if (options.crashPoints === false) return;
      ctx.note("crashPoints", points);
      for (const point of points) {
        const pointDb = ctx.run.file(`${point.replace(/\W/g, "_")}.db`);
        const pointAcks = `${pointDb}.acks.jsonl`;
        // @2: the first rotation is acknowledged, the second dies at the point.
        const crasher = ctx.spawn("_rotator.ts", [pointDb, pointAcks, "0"], {
          env: { SESSION_DB_CRASH_AT: `${point}@2` },
        });
        const killed = await awaitCrash(ctx, crasher, point, pointDb, pointAcks);
        await t.step(`${point}: the child died there by SIGKILL`, () => {
          ok(killed, crasher.describe());
        });
        await checkRun(ctx, t, point, pointDb, pointAcks);
        await takeOverInFlight(ctx, t, point, pointDb, pointAcks);
      }
    },
  }, options);
}
