import { deepStrictEqual, ok } from "node:assert/strict";
import { readAckJournal } from "../harness/ack_journal.ts";
import { integrityCheck } from "../harness/db_audit.ts";
import { type CellRun, defineCell } from "./_cell.ts";
import type { CellOptions } from "./cell_options.ts";
import { awaitCrash, killAfterAcks, legHonouredStep } from "./_kill.ts";
import { startTallies, tally } from "./_tally.ts";
import { CELL_METHODS, loadTarget, openTargetStore, type StoredSession } from "./target.ts";

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

type Rotation = { i: number; parentId: string; childId: string };

interface Recovered {
  sessions: StoredSession[];
  summaries: Record<string, (string | null)[]>;
  appendError: Record<string, string>;
  invariants: string[];
}

async function recover(target: string, db: string, probeAppend: string[]): Promise<Recovered> {
  const store = await openTargetStore(target, db);
  try {
    const sessions = (await store.listSessions!()).map((s) => ({
      id: s.id,
      parentSessionId: s.parentSessionId,
      endedAt: s.endedAt,
      endReason: s.endReason,
    })).sort((a, b) => a.id.localeCompare(b.id));
    const summaries: Record<string, (string | null)[]> = {};
    for (const s of sessions) {
      if (s.parentSessionId) {
        summaries[s.id] = (await store.getMessages(s.id)).map((m) => m.content);
      }
    }
    const invariants = store.checkInvariants ? await store.checkInvariants() : [];
    const appendError: Record<string, string> = {};
    for (const parentId of probeAppend) {
      try {
        await store.appendMessage(parentId, { role: "user", content: "after rotation" });
        appendError[parentId] = "accepted";
      } catch (error) {
        appendError[parentId] = error instanceof Error ? error.name : String(error);
      }
    }
    return { sessions, summaries, appendError, invariants };
  } finally {
    await store.close();
  }
}

/** The orphan query through the store: parents ended by compression with no child. */
function orphans(sessions: StoredSession[]): string[] {
  const parents = new Set(sessions.map((s) => s.parentSessionId).filter((p) => p !== null));
  return sessions.filter((s) => s.endReason === "compression" && !parents.has(s.id)).map((s) =>
    s.id
  );
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
  // Reads only for the determinism pass, before the append probe writes anything.
  const first = await recover(ctx.target, db, []);
  const second = await recover(ctx.target, db, probe);
  const byId = new Map(first.sessions.map((s) => [s.id, s]));
  ctx.note(`${label}.acknowledged`, acks.length);
  ctx.note(`${label}.sessions`, first.sessions.length);
  tally(ctx, "acknowledgedOps", acks.length);
  tally(
    ctx,
    "lost",
    acks.filter((ack) =>
      !(byId.get(ack.parentId)?.endReason === "compression" &&
        byId.get(ack.childId)?.parentSessionId === ack.parentId &&
        first.summaries[ack.childId]?.join("\n") === `summary ${ack.i}`)
    ).length,
  );

  await t.step(`${label}: no compression orphan`, () => {
    deepStrictEqual(orphans(first.sessions), []);
  });
  await t.step(`${label}: all ${acks.length} acknowledged rotations complete`, () => {
    for (const ack of acks) {
      const parent = byId.get(ack.parentId);
      const child = byId.get(ack.childId);
      ok(parent?.endReason === "compression", `${ack.parentId} not ended by compression`);
      ok(child?.parentSessionId === ack.parentId, `${ack.childId} missing or not its child`);
      deepStrictEqual(first.summaries[ack.childId], [`summary ${ack.i}`]);
    }
  });
  const next = (acks.at(-1)?.i ?? -1) + 1;
  await t.step(`${label}: in-flight rotation ${next} complete or absent`, () => {
    const parent = byId.get(`parent-${next}`);
    const child = byId.get(`child-${next}`);
    const complete = parent?.endReason === "compression" &&
      child?.parentSessionId === parent.id &&
      first.summaries[child.id]?.join() === `summary ${next}`;
    const absent = child === undefined && (parent === undefined || parent.endedAt === null);
    ok(
      complete || absent,
      `partial rotation: parent ${JSON.stringify(parent)}, child ${
        JSON.stringify(child)
      }, summary ${JSON.stringify(child ? first.summaries[child.id] : undefined)}`,
    );
  });
  await t.step(`${label}: appends to rotated parents refused with the typed error`, () => {
    for (const parentId of probe) {
      ok(
        second.appendError[parentId] === "CompressionSessionClosedError",
        `append to ${parentId}: ${second.appendError[parentId]}`,
      );
    }
  });
  await t.step(`${label}: recovery deterministic, integrity and invariants`, () => {
    deepStrictEqual(second.sessions, first.sessions);
    const integrity = integrityCheck(db);
    ok(integrity === "ok", `integrity_check: ${integrity}`);
    deepStrictEqual(first.invariants, []);
  });
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
