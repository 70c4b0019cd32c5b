// Cell 5's sweep atomicity: a recovery sweep takes every obligation of the dead processes
// in one transaction, so a recoverer killed inside its sweep leaves all of them taken or
// none. A sender marks two obligations attempting (a window of two) and dies before
// sending; from a copy of that file a recoverer is killed inside `sweepRecoverable`: at
// the target's `sweepRecoverable:afterClaim` (the first claim made, not committed) when
// it lists it, else before each of the sweep's file-system calls in turn (the kill
// series). The non-idempotent sweep settles each attempting orphan `unknown`, which is
// visible: both or neither.
import { ok } from "node:assert/strict";
import { classifyExit } from "../../harness/child.ts";
import { copyTree } from "../../internal/fs.ts";
import type { CellRun } from "../engine/cell.ts";
import { untilExited } from "../moves/kill.ts";
import { killSeries, type SeriesKind } from "../moves/kill_series.ts";
import { SENDER_AFTER_ATTEMPTING } from "./inbox.ts";
import { tally } from "../engine/tally.ts";
import { openTargetStore, type StoredObligation } from "../contract/target.ts";
import { RECOVERER, SENDER } from "./_children.ts";
import { obligationContent, writtenContent } from "./_content.ts";

const POINT = "sweepRecoverable:afterClaim";
/** The orphans the sender left attempting (its window). */
const IN_FLIGHT = [0, 1].map((i) => obligationContent("effect", i));

async function attempting(target: string, db: string): Promise<Map<string, StoredObligation>> {
  const store = await openTargetStore(target, db);
  try {
    // By what was recorded: a text the store changed is judged by the cell's state checks.
    const all = (await store.listObligations!()).map((o) => ({
      ...o,
      content: writtenContent(o.content).content,
    }));
    return new Map(all.filter((o) => IN_FLIGHT.includes(o.content)).map((o) => [o.content, o]));
  } finally {
    await store.close();
  }
}

/** What {@linkcode sweepAtomicity} may use: the target's crash points, the series' kind. */
export interface SweepProbe {
  /** The crash points the target lists. */
  listed: ReadonlySet<string>;
  /** The kill series' kind (`off`: none). */
  kind: SeriesKind | "off";
  /** Obligations the sender records. */
  obligations: number;
}

/** A recovered file's judge: its label names the step. */
type SweepCheck = (db: string, label: string) => Promise<void>;

/**
 * Runs the sweep-atomicity probe: the store's own crash point inside the sweep when
 * `probe.listed` names it, else the kill series of `probe.kind` (nothing when `off`).
 *
 * @example
 * ```ts ignore
 * const listed = new Set((await loadTarget(ctx.target)).crashPoints?.() ?? []);
 * await sweepAtomicity(ctx, t, { listed, kind: "sync", obligations: 5 });
 * ```
 */
export async function sweepAtomicity(
  ctx: CellRun,
  t: Deno.TestContext,
  probe: SweepProbe,
): Promise<void> {
  const { listed, kind, obligations } = probe;
  const own = listed.has(POINT);
  if (!own && kind === "off") return;
  const setup = await leaveTwoAttempting(ctx, t, obligations);
  const setupDb = `${setup}/db/store.db`;
  // The store's folder whole: whatever it keeps beside its path is its own.
  copyTree(`${setup}/db`, `${setup}/pristine`);
  const before = await attempting(ctx.target, setupDb);
  const check = bothOrNeither(ctx, t, before);
  const args = (db: string, dir: string) => {
    copyTree(`${setup}/pristine`, db.slice(0, db.lastIndexOf("/")));
    return [db, `${dir}/inbox.jsonl`, dir, "sweeper", "-", "0"];
  };
  if (own) {
    await killAtPoint(ctx, t, { args, check });
    return;
  }
  await killSeries(ctx, t, {
    op: "sweepRecoverable",
    occurrence: 1,
    script: RECOVERER,
    args,
    check: (db, _dir, label) => check(db, label),
    kind: kind as SeriesKind,
  });
}

/**
 * A sender that marks two obligations attempting (a window of two) and dies before
 * sending; returns the folder of the file it left.
 */
async function leaveTwoAttempting(
  ctx: CellRun,
  t: Deno.TestContext,
  obligations: number,
): Promise<string> {
  const setup = ctx.run.file("sweep-atomicity");
  Deno.mkdirSync(`${setup}/db`, { recursive: true });
  const setupDb = `${setup}/db/store.db`;
  const sender = ctx.spawn(
    SENDER,
    [setupDb, `${setup}/inbox.jsonl`, String(obligations), "-", "2"],
    { env: { SESSION_DB_CRASH_AT: `${SENDER_AFTER_ATTEMPTING}@2` } },
  );
  await untilExited(sender, `the sender to reach ${SENDER_AFTER_ATTEMPTING}@2`);
  const died = classifyExit(sender.exited!).kind === "killed";
  if (died) {
    tally(ctx, "sigkills", 1);
    ctx.observeLeg(setupDb, `${SENDER_AFTER_ATTEMPTING}@2 (window of two)`, true);
  }
  await t.step("sweep atomicity: the sender died with two obligations attempting", () => {
    ok(died, sender.describe());
  });
  return setup;
}

/** The judge of a file a killed sweep left: both orphans taken (as `before` shows) or neither. */
function bothOrNeither(
  ctx: CellRun,
  t: Deno.TestContext,
  before: Map<string, StoredObligation>,
): SweepCheck {
  return async (db, label) => {
    const after = await attempting(ctx.target, db);
    const taken = IN_FLIGHT.filter((c) => {
      const [a, b] = [before.get(c), after.get(c)];
      return a?.state !== b?.state || a?.deliveryFence !== b?.deliveryFence;
    });
    await t.step(`${label}: the sweep took both orphans or neither`, () => {
      ok(
        before.size === IN_FLIGHT.length &&
          (taken.length === 0 || taken.length === IN_FLIGHT.length),
        `a recoverer killed inside its sweep left ${
          JSON.stringify(IN_FLIGHT.map((c) => [c, before.get(c)?.state, after.get(c)?.state]))
        } (content, before, after): a sweep takes every dead process's obligation in one transaction`,
      );
    });
  };
}

/** A recoverer on a copy of the file, killed at the store's own point inside its sweep. */
async function killAtPoint(
  ctx: CellRun,
  t: Deno.TestContext,
  sweep: { args: (db: string, dir: string) => string[]; check: SweepCheck },
): Promise<void> {
  const dir = ctx.run.file("sweep-atomicity-point");
  const db = `${dir}/db/store.db`;
  const sweeper = ctx.spawn(RECOVERER, sweep.args(db, dir), {
    env: { SESSION_DB_CRASH_AT: POINT },
  });
  await untilExited(sweeper, `the recoverer to reach ${POINT}`);
  const killed = classifyExit(sweeper.exited!).kind === "killed";
  if (killed) {
    tally(ctx, "sigkills", 1);
    ctx.observeLeg(db, POINT);
  }
  await t.step(`sweep atomicity: the recoverer died at ${POINT}`, () => {
    ok(killed, sweeper.describe());
  });
  await sweep.check(db, `sweep killed at ${POINT}`);
}
