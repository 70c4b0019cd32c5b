import { deepStrictEqual, ok } from "node:assert/strict";
import { readAckJournal } from "../../harness/ack_journal.ts";
import { besideStore } from "../../harness/evidence.ts";
import { LOCK_TTL_MS } from "./children/lock_taker.ts";
import { type CellRun, defineCell } from "../engine/cell.ts";
import type { CellOptions } from "../engine/options.ts";
import { crashAtPoint, killAfterAcks, killReadyAndObserve } from "../moves/kill.ts";
import { killSeries, seriesKind } from "../moves/kill_series.ts";
import { raceSeries, raceSeriesOf } from "../moves/race.ts";
import { stopSeries } from "../moves/guarded_stops.ts";
import { judgeRotations, orphans, recover, type Rotation } from "./judge.ts";
import { checkSteps } from "../engine/state_check.ts";
import { diagnosed } from "../engine/diagnoses.ts";
import { RESUMED_OPS, resumedStep } from "../moves/resume.ts";
import { startTallies, tally } from "../engine/tally.ts";
import { answerOf, describeAnswer, verdict } from "../contract/typed.ts";
import { loadTarget } from "../contract/target.ts";
import { withStore } from "../contract/with_store.ts";
import { LOCK_HOLDER, LOCK_TAKER, ROTATOR } from "./_children.ts";
import { readReport } from "../../internal/report_line.ts";

/**
 * Options of {@linkcode rotationAtomicityCell}.
 *
 * @example
 * ```ts
 * import { rotationAtomicityCell, type RotationAtomicityOptions } from "./cell.ts";
 * const options: RotationAtomicityOptions = {
 *   target: new URL("../reference_target.ts", import.meta.url),
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

/** What cell 3's phases share: the run, its steps and the options. */
interface RotationRun {
  ctx: CellRun;
  t: Deno.TestContext;
  options: RotationAtomicityOptions;
}

/** A rotator's files: its database and its acknowledgement journal. */
interface RotatorFiles {
  db: string;
  acksPath: string;
}

/**
 * Judges a killed rotator's file against its journal, probing appends to its first and
 * last acknowledged parents; notes and counts what it found.
 */
async function checkRun(
  cell: Pick<RotationRun, "ctx" | "t">,
  label: string,
  files: RotatorFiles,
): Promise<void> {
  const { ctx, t } = cell;
  const { db, acksPath } = files;
  const acks = readAckJournal<Rotation>(acksPath);
  const probe = [acks[0], acks.at(-1)].filter((a) => a !== undefined).map((a) => a.parentId);
  const judged = await judgeRotations(ctx.target, db, { acks, probe });
  ctx.note(`${label}.acknowledged`, acks.length);
  ctx.note(`${label}.sessions`, judged.sessions.length);
  tally(ctx, "acknowledgedOps", acks.length);
  tally(ctx, "lost", judged.lost);
  await checkSteps(t, judged.checks, `${label}: `);
}

/**
 * Resume after recovery: a fresh rotator rotates sessions of its own (`r-parent-i`) on the
 * recovered file and kills itself right after its third acknowledged rotation; both lives'
 * acknowledged rotations must then be whole (a store whose first rotation after recovery
 * is refused, or takes what an earlier one holds, fails).
 */
async function resumeRun(
  cell: Pick<RotationRun, "ctx" | "t">,
  label: string,
  files: RotatorFiles,
): Promise<void> {
  const { ctx, t } = cell;
  const { db, acksPath } = files;
  const resumedAcks = `${acksPath}.resumed.jsonl`;
  const what = `${label}, resumed`;
  const args = [db, resumedAcks, "0", RESUMED, String(RESUMED_OPS)];
  if (!await resumedStep(ctx, t, { ops: "rotations", script: ROTATOR, args, db, label })) return;
  const acks = readAckJournal<Rotation>(resumedAcks);
  const probe = [acks[0], acks.at(-1)].filter((a) => a !== undefined).map((a) => a.parentId);
  const before = await judgeRotations(ctx.target, db, {
    acks: readAckJournal<Rotation>(acksPath),
  });
  const after = await judgeRotations(ctx.target, db, { acks, probe, prefix: RESUMED });
  tally(ctx, "acknowledgedOps", acks.length);
  tally(ctx, "lost", before.lost + after.lost);
  const firstLife = before.checks.find((c) => c.name.startsWith("all "))!;
  await checkSteps(t, [firstLife, ...after.checks], `${what}: `);
}

/**
 * Lock liveness: a fresh process takes the compression lock of `parentId` (held, if at
 * all, by a killed process, with a TTL far longer than the cell) in one attempt and
 * completes a rotation with it. Then it is killed right after its release returned, with
 * no further write and no close; its holder names this (live) process, so the lock is
 * free afterwards only if that acknowledged release is durable.
 */
async function takeOver(
  cell: Pick<RotationRun, "ctx" | "t">,
  label: string,
  lock: { db: string; parentId: string },
): Promise<void> {
  const { ctx, t } = cell;
  const { db, parentId } = lock;
  const childId = `taken-${parentId}`;
  const ready = besideStore(db, `${parentId}.taker.ready`);
  const child = ctx.spawn(LOCK_TAKER, [db, parentId, childId, ready, String(Deno.pid)]);
  await killReadyAndObserve(ctx, child, {
    ready,
    what: `a fresh process to take the lock of ${parentId}`,
    db,
    at: `${label}: the taker, killed after its release`,
  });
  const said = readReport<{
    taken?: boolean;
    tookMs?: number;
    released?: boolean;
  }>(child.stdout) ?? {};
  await t.step(
    `${label}: a fresh process takes the dead holder's lock of ${parentId} at once`,
    () => {
      diagnosed("lock-held-past-crash", () =>
        ok(
          said.taken === true,
          `tryAcquireCompressionLock returned ${said.taken} (${said.tookMs} ms) for the lock of a killed holder: a dead process's lock must be recoverable at once, not after its TTL of ${LOCK_TTL_MS} ms`,
        ));
    },
  );
  const recovered = await recover(ctx.target, db, []);
  const free = await withStore(ctx.target, db, async (store) => {
    const prober = `cell3-after:pid=${Deno.pid}`;
    const took = await store.tryAcquireCompressionLock!(parentId, prober, LOCK_TTL_MS);
    if (took) await store.releaseCompressionLock!(parentId, prober);
    return took;
  });
  await t.step(`${label}: the taker's rotation of ${parentId} and its release are durable`, () => {
    const parent = recovered.sessions.find((s) => s.id === parentId);
    const child = recovered.sessions.find((s) => s.id === childId);
    ok(parent?.endReason === "compression", `${parentId}: ${JSON.stringify(parent)}`);
    ok(child?.parentSessionId === parentId, `${childId}: ${JSON.stringify(child)}`);
    deepStrictEqual(orphans(recovered.sessions), []);
    ok(said.released === true, `the taker's releaseCompressionLock returned ${said.released}`);
    ok(
      free,
      `the lock of ${parentId} is still held after the taker's acknowledged release and its kill: the release was not durable`,
    );
  });
  ctx.note("takeovers", Number(ctx.figures.takeovers ?? 0) + 1);
}

/** The resumed rotator's session prefix. */
const RESUMED = "r-";

/** After a killed rotation: take over the in-flight parent when it is still open. */
async function takeOverInFlight(
  cell: Pick<RotationRun, "ctx" | "t">,
  label: string,
  files: RotatorFiles,
): Promise<void> {
  const { ctx } = cell;
  const { db, acksPath } = files;
  const next = (readAckJournal<Rotation>(acksPath).at(-1)?.i ?? -1) + 1;
  const parentId = `parent-${next}`;
  const parent = (await recover(ctx.target, db, [])).sessions.find((s) => s.id === parentId);
  if (parent && parent.endedAt === null) await takeOver(cell, label, { db, parentId });
  else ctx.note(`${label}.takeOver`, `${parentId} ${parent ? "already rotated" : "not created"}`);
}

/**
 * A holder killed while it holds the lock, then taken over at once. Before it waits to
 * be killed it rotates `acked` and journals it, with no write after: that acknowledged
 * rotation must be whole after the kill.
 */
async function deadHolder(ctx: CellRun, t: Deno.TestContext): Promise<void> {
  const db = ctx.run.store("dead-holder");
  const ready = ctx.run.file("dead-holder.ready");
  const acks = ctx.run.file("dead-holder.acks.jsonl");
  const holder = ctx.spawn(LOCK_HOLDER, [db, ready, acks]);
  await killReadyAndObserve(ctx, holder, {
    ready,
    what: "the holder to take the compression lock",
    db,
    at: "dead holder (waiting with the lock)",
  });
  const acked = readAckJournal<Rotation>(acks);
  const recovered = await recover(ctx.target, db, ["acked"]);
  await t.step("dead holder: its last acknowledged rotation, of acked, is durable", () => {
    deepStrictEqual(acked.map((a) => a.parentId), ["acked"], "the holder's journal");
    const parent = recovered.sessions.find((s) => s.id === "acked");
    const child = recovered.sessions.find((s) => s.id === "acked-child");
    ok(
      parent?.endReason === "compression" && child?.parentSessionId === "acked",
      `the acknowledged rotation of acked is not whole after the kill: parent ${
        JSON.stringify(parent)
      }, child ${JSON.stringify(child)}`,
    );
    deepStrictEqual(recovered.handoffs["acked-child"]?.map((m) => m.content), [
      "summary of acked",
    ]);
    ok(
      recovered.appendError.acked === "CompressionSessionClosedError",
      `append to acked: ${recovered.appendError.acked}`,
    );
  });
  await takeOver({ ctx, t }, "dead holder", { db, parentId: "held" });
}

/**
 * Locks are per session and per holder: one holder's lock of `kept` stays in force when
 * a process that does not hold it releases it (refused: `false` or a typed error) and
 * when the holder rotates and releases another session; the rotation ends only its
 * parent and leaves `kept` and its messages as they were; the store's invariants hold.
 */
async function bystander(ctx: CellRun, t: Deno.TestContext): Promise<void> {
  const holder = `cell3-bystander:pid=${Deno.pid}`;
  // Each probe is another holder: one that took the lock must not hide the next one.
  const prober = (n: number) => `cell3-prober-${n}:pid=${Deno.pid}`;
  const seen = await withStore(ctx.target, ctx.run.store("bystander"), async (store) => {
    for (const [id, turns] of [["kept", 3], ["rotated", 1]] as const) {
      await store.createSession(id);
      for (let i = 0; i < turns; i++) {
        await store.appendMessage(id, { role: "user", content: `${id} ${i}` });
      }
      if (!await store.tryAcquireCompressionLock!(id, holder, LOCK_TTL_MS)) {
        throw new Error(`bystander: could not take the free compression lock of ${id}`);
      }
    }
    const stray = await answerOf(() => store.releaseCompressionLock!("kept", prober(1)));
    const afterStray = await store.tryAcquireCompressionLock!("kept", prober(2), LOCK_TTL_MS);
    await store.publishCompressionChild!({
      parentId: "rotated",
      childId: "rotated-child",
      holder,
      messages: [{ role: "system", content: "summary of rotated" }],
    });
    const released = await store.releaseCompressionLock!("rotated", holder);
    const afterRelease = await store.tryAcquireCompressionLock!("kept", prober(3), LOCK_TTL_MS);
    const kept = (await store.listSessions!()).find((s) => s.id === "kept");
    const messages = (await store.getMessages("kept")).map((m) => m.content);
    const invariants = store.checkInvariants ? await store.checkInvariants() : [];
    return { stray, afterStray, released, afterRelease, kept, messages, invariants };
  });
  ctx.note("bystander", { strayRelease: describeAnswer(seen.stray) });
  await t.step("bystander: a process that does not hold a lock cannot release it", () => {
    ok(
      verdict(seen.stray) === "refused",
      `releaseCompressionLock of kept by a process that does not hold it ${
        describeAnswer(seen.stray)
      } (expected false or a typed error)`,
    );
    ok(!seen.afterStray, "another process took kept's lock after that refused release");
  });
  await t.step("bystander: a release and a rotation leave other sessions alone", () => {
    ok(seen.released === true, `the holder's release of rotated returned ${seen.released}`);
    ok(
      !seen.afterRelease,
      "another process took kept's lock after its holder released the lock of rotated",
    );
    ok(
      seen.kept?.endedAt === null && seen.kept.endReason === null,
      `kept changed by the rotation of rotated: ${JSON.stringify(seen.kept)}`,
    );
    deepStrictEqual(seen.messages, ["kept 0", "kept 1", "kept 2"]);
    deepStrictEqual(seen.invariants, [], "the store's invariants after the rotation");
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
 * `CompressionSessionClosedError`, recovery deterministic, invariants hold. After each
 * kill a fresh process takes the in-flight parent's lock at once (liveness), rotates it
 * and releases, and is killed right after that release returned (no write, no close
 * after): the release must be durable. A holder killed while it waits with a lock, its
 * last write an acknowledged publish: the lock is taken at once, the publish durable.
 * And locks are per session and holder: a release by a process that does not hold the
 * lock is refused and the lock stays in force; a rotation and a release leave another
 * session's lock, state and messages alone. Every leg.
 *
 * @param options Target, leg, thresholds.
 * @returns The test definitions to register with `Deno.test`.
 * @example
 * ```ts
 * import { rotationAtomicityCell } from "./cell.ts";
 * for (const test of await rotationAtomicityCell({ target: new URL("../reference_target.ts", import.meta.url) })) {
 *   Deno.test(test);
 * }
 * ```
 */
export function rotationAtomicityCell(
  options: RotationAtomicityOptions,
): Promise<Deno.TestDefinition[]> {
  return defineCell({
    id: 3,
    preloads: true,
    run: (ctx, t) => rotationRun({ ctx, t, options }),
  }, options);
}

/**
 * Cell 3's phases: the random kill, the dead holder, the bystander, the kill series inside
 * a publish, the lock races and stops, and the crash points.
 */
async function rotationRun(cell: RotationRun): Promise<void> {
  const { ctx, t, options } = cell;
  startTallies(ctx);
  await randomKill(cell);
  await deadHolder(ctx, t);
  await bystander(ctx, t);
  const points = ((await loadTarget(ctx.target)).crashPoints?.() ?? [])
    .filter((p) => p.startsWith("publishCompressionChild:"));
  await publishSeries(cell, points);
  await lockRaces(cell, points);
  if (options.crashPoints === false) return;
  await crashPointKills(cell, points);
}

/**
 * The rotator SIGKILLed at a random moment past the threshold; its file judged, resumed,
 * and the in-flight parent's lock taken over.
 */
async function randomKill(cell: RotationRun): Promise<void> {
  const { ctx, options } = cell;
  const files = { db: ctx.run.store("store"), acksPath: ctx.run.file("acks.jsonl") };
  const child = ctx.spawn(ROTATOR, [files.db, files.acksPath, "0"]);
  await killAfterAcks(ctx, child, {
    ...files,
    count: options.minAcknowledged ?? 50,
    what: "rotations",
    deadlineMs: options.deadlineMs,
  });
  await checkRun(cell, "random kill", files);
  await resumeRun(cell, "random kill", files);
  await takeOverInFlight(cell, "random kill", files);
}

/**
 * Inside a publish with no declared crash point: a kill at each of its calls (the second
 * rotation's, so one was acknowledged), each state judged and resumed.
 */
async function publishSeries(cell: RotationRun, points: readonly string[]): Promise<void> {
  const kind = seriesKind(cell.options.killSeries);
  if (kind === "off" || points.length > 0) return;
  await killSeries(cell.ctx, cell.t, {
    op: "publishCompressionChild",
    occurrence: 2,
    script: ROTATOR,
    args: (db, dir) => [db, `${dir}/acks.jsonl`, "0"],
    check: (db, dir, label) => checkRun(cell, label, { db, acksPath: `${dir}/acks.jsonl` }),
    resume: (db, dir, label) => resumeRun(cell, label, { db, acksPath: `${dir}/acks.jsonl` }),
    kind,
  });
}

/**
 * With the race series on: a writer taking the lock over at each lock call of the publish
 * (where the target declares no crash point in it), and an append (a fork) stopped at each
 * of its lock calls while the session is rotated (rewound) by another process.
 */
async function lockRaces(cell: RotationRun, points: readonly string[]): Promise<void> {
  const { ctx, t, options } = cell;
  if (raceSeriesOf(options.raceSeries) === "locks" && points.length === 0) {
    await raceSeries(ctx, t, "publishCompressionChild");
  }
  if (raceSeriesOf(options.raceSeries) === "locks") await stopSeries(ctx, t, ["append"]);
}

/**
 * A fresh rotator at each `publishCompressionChild:*` point the target lists, dying there
 * in its second rotation (the first acknowledged); each file judged, resumed, and the
 * in-flight parent's lock taken over.
 */
async function crashPointKills(cell: RotationRun, points: readonly string[]): Promise<void> {
  const { ctx, t } = cell;
  ctx.note("crashPoints", points);
  for (const point of points) {
    // @2: the first rotation is acknowledged, the second dies at the point.
    const files = await crashAtPoint({ ctx, t }, {
      point,
      nth: 2,
      script: ROTATOR,
      args: ({ db, acksPath }) => [db, acksPath, "0"],
    });
    await checkRun(cell, point, files);
    await resumeRun(cell, point, files);
    await takeOverInFlight(cell, point, files);
  }
}
